import { builtInWords } from '../../deliveries';
import type { CarrierCity } from '../cities';
import {
  LABEL_MAX_BYTES,
  carrierTime,
  carrierWords,
  failedOutcome,
  fields,
  isPdf,
  isSuccess,
  jsonOf,
  listOf,
  notAnswered,
  reasonOf,
  text,
  twoDecimals,
  wordKey,
  UNPUBLISHED_RATE,
} from './common';
import type {
  CarrierAnswer,
  CarrierMeaning,
  CarrierRequest,
  CarrierSession,
  CarrierUpdate,
  CreateOutcome,
  LookupOutcome,
  ParcelRequest,
  ShippingAdapter,
} from './types';

/**
 * Digylog (Morocco), https://api.digylog.com/api/v2/seller: a bearer token and the seller portal's
 * Referer on every call. A parcel is sent with `checkDuplicate: 1`, so the carrier refuses a second
 * parcel with the same `num` (our reference): a create whose answer was lost is sent again, and the
 * refusal of the duplicate names the parcel it already holds. No push: the worker polls
 * `GET /order/{tracking}/infos`. No cancel through the API.
 */

const REFERER = 'https://apiseller.digylog.com';

/**
 * Digylog's own words first (its attempts are not final, whatever the general dictionary says of
 * `injoignable`), then the delivery dictionary every carrier's report is read with.
 */
const OWN_WORDS: Array<[string, CarrierMeaning]> = [
  ['Nouveau', 'shipped'],
  ['En attente de ramassage', 'shipped'],
  ['Ramassé', 'shipped'],
  ['Expédié', 'shipped'],
  ['En transit', 'in_transit'],
  ['Reçu', 'in_transit'],
  ['Sorti pour livraison', 'out_for_delivery'],
  ['En cours de livraison', 'out_for_delivery'],
  ['Livré', 'delivered'],
  ['Refusé', 'refused'],
  ['Retourné à l’expéditeur', 'returned'],
  ["Retourné à l'expéditeur", 'returned'],
  ['Retourné', 'returned'],
  ['Perdu', 'lost'],
  ['Annulé', 'cancelled'],
  ['Tentative échouée', 'attempted'],
  ['Injoignable', 'attempted'],
  ['Pas de réponse', 'attempted'],
  ['Reporté', 'attempted'],
];
const WORDS = new Map<string, CarrierMeaning>([
  ...Object.entries(builtInWords()).flatMap(([status, words]) => words.map((word) => [wordKey(word), status as CarrierMeaning] as const)),
  ...OWN_WORDS.map(([word, meaning]) => [wordKey(word), meaning] as const),
]);

/** The memo key of a create whose answer was lost: its body, sent again to ask the carrier. */
const sentKey = (reference: string) => `sent:${reference}`;

function call(session: CarrierSession, req: CarrierRequest): Promise<CarrierAnswer> {
  return session.request({ ...req, headers: { ...req.headers, authorization: `Bearer ${session.credentials.token ?? ''}`, referer: REFERER } });
}

/** Digylog's ids are numbers; a network id is kept as text. */
const numeric = (value: string | undefined): number | string => (value && /^\d+$/.test(value) ? Number(value) : (value ?? ''));

function body(session: CarrierSession, parcel: ParcelRequest) {
  return {
    mode: 1,
    network: numeric(session.credentials.network),
    store: session.credentials.store ?? '',
    status: 1,
    checkDuplicate: 1,
    orders: [
      {
        type: 1,
        num: parcel.reference,
        name: parcel.name,
        phone: parcel.phone,
        address: parcel.address,
        city: parcel.city.name,
        price: twoDecimals(parcel.amount),
        openproduct: parcel.allowOpen ? 1 : 0,
        note: parcel.note ?? '',
        refs: parcel.productLines.map((line) => ({ designation: line.name, quantity: line.quantity })),
      },
    ],
  };
}

/** One order's line of the answer: success, the carrier's errors, the tracking number (however it names it). */
function lineOf(answer: CarrierAnswer) {
  const line = fields(listOf(jsonOf(answer))[0]);
  const tracking = text(line.tracking) || text(line.traking) || text(line.trackingNumber) || text(line.tracking_number);
  const errors = Array.isArray(line.errors) ? line.errors.map(text).filter(Boolean) : [text(line.errors)].filter(Boolean);
  return { found: Object.keys(line).length > 0, ok: line.isSuccess === true, tracking, reason: reasonOf(errors.join('; ') || text(line.message)) };
}

async function createOne(session: CarrierSession, parcel: ParcelRequest): Promise<CreateOutcome> {
  const sent = body(session, parcel);
  const answer = await call(session, { method: 'POST', path: '/orders', json: sent });
  const outcome = readCreate(answer);
  // Kept until answered, so a look-up can send the same parcel again (the carrier refuses the duplicate).
  if (outcome.kind === 'unanswered') session.memo.set(sentKey(parcel.reference), JSON.stringify(sent));
  else session.memo.delete(sentKey(parcel.reference));
  return outcome;
}

function readCreate(answer: CarrierAnswer): CreateOutcome {
  if (!isSuccess(answer)) return failedOutcome(answer);
  const line = lineOf(answer);
  if (!line.found) return { kind: 'unanswered', reason: 'the carrier answered without the order' };
  // A tracking number is a parcel the carrier holds: made now, or the duplicate of ours it refused.
  if (line.tracking) return { kind: 'created', parcel: { tracking: line.tracking, labelUrl: null, carrierStatus: null } };
  return { kind: 'refused', reason: line.reason || 'refused by Digylog' };
}

/** A named item of a list (`GET /stores`, `GET /networks`) matching the credential by name or id. */
function listed(answer: CarrierAnswer, wanted: string): boolean {
  return listOf(jsonOf(answer)).some((item) => [text(fields(item).name), text(fields(item).id)].includes(wanted.trim()));
}

async function checkListed(session: CarrierSession, path: string, field: string, wanted: string) {
  const answer = await call(session, { method: 'GET', path });
  if (answer.status === 401 || answer.status === 403) return { field: 'token', reason: carrierWords(answer) };
  if (!isSuccess(answer)) return { field, reason: notAnswered(answer) };
  if (listed(answer, wanted)) return null;
  const names = listOf(jsonOf(answer))
    .map((item) => text(fields(item).name))
    .filter(Boolean);
  return { field, reason: reasonOf(`not one of the account's: ${names.join(', ') || 'none'}`) };
}

export const digylog: ShippingAdapter = {
  kind: 'digylog',
  title: 'Digylog',
  originSetting: 'DIGYLOG_API_ORIGIN',
  defaultOrigin: 'https://api.digylog.com/api/v2/seller',
  credentials: [
    { name: 'token', secret: true },
    { name: 'store', secret: false },
    { name: 'network', secret: false },
  ],
  needsPickupCity: false,
  limits: UNPUBLISHED_RATE,
  push: 'none',

  async check(session) {
    return (
      (await checkListed(session, '/stores', 'store', session.credentials.store ?? '')) ??
      (await checkListed(session, '/networks', 'network', session.credentials.network ?? ''))
    );
  },

  async cities(session) {
    const answer = await call(session, { method: 'GET', path: '/cities' });
    if (!isSuccess(answer)) throw new Error(`Digylog's cities: ${carrierWords(answer)}`);
    return listOf(jsonOf(answer)).flatMap((item): CarrierCity[] => {
      const city = fields(item);
      const name = text(city.name);
      return name ? [{ id: text(city.id) || name, name, arabicName: text(city.name_ar) || null }] : [];
    });
  },

  async create(session, parcels) {
    const outcomes = new Map<string, CreateOutcome>();
    for (const parcel of parcels) outcomes.set(parcel.reference, await createOne(session, parcel));
    return outcomes;
  },

  async lookup(session, reference, tracking): Promise<LookupOutcome> {
    if (tracking) {
      const update = await digylog.status?.(session, tracking).catch((err: Error) => err);
      if (update instanceof Error) return { kind: 'cannot_tell', reason: reasonOf(update.message) };
      return update ? { kind: 'found', parcel: { tracking, labelUrl: null, carrierStatus: update.words } } : { kind: 'absent' };
    }
    const sent = session.memo.get(sentKey(reference));
    if (!sent) return { kind: 'cannot_tell', reason: 'Digylog cannot be asked by our reference' };
    const answer = await call(session, { method: 'POST', path: '/orders', json: JSON.parse(sent) });
    // Not answered again: the question stays (its body kept) for the next try.
    if (answer.status === null || answer.status >= 500) return { kind: 'unanswered', reason: carrierWords(answer) };
    const line = isSuccess(answer) ? lineOf(answer) : null;
    if (!line?.tracking) return { kind: 'cannot_tell', reason: line?.reason || carrierWords(answer) };
    session.memo.delete(sentKey(reference));
    return { kind: 'found', parcel: { tracking: line.tracking, labelUrl: null, carrierStatus: null } };
  },

  async label(session, parcel) {
    const answer = await call(session, { method: 'POST', path: '/labels', json: { orders: [parcel.tracking] }, maxBytes: LABEL_MAX_BYTES });
    if (!isSuccess(answer) || !isPdf(answer.body))
      throw new Error(`Digylog's label: ${answer.status === null ? answer.failure : `HTTP ${answer.status}, not a PDF`}`);
    return answer.body;
  },

  async status(session, tracking): Promise<CarrierUpdate | null> {
    const answer = await call(session, { method: 'GET', path: `/order/${encodeURIComponent(tracking)}/infos` });
    if (answer.status === 404) return null;
    if (!isSuccess(answer)) throw new Error(`Digylog's order: ${answer.status === null ? answer.failure : `HTTP ${answer.status}`}`);
    const json = fields(jsonOf(answer));
    const order = Object.keys(fields(json.data)).length > 0 ? fields(json.data) : json;
    const words = text(order.status) || text(order.statut) || text(order.state);
    return words ? { tracking, words, at: carrierTime(order.updated_at ?? order.date) } : null;
  },

  meaning(words) {
    return WORDS.get(wordKey(words));
  },
};
