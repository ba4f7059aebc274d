import type { CarrierCity } from '../cities';
import {
  LABEL_MAX_BYTES,
  carrierTime,
  carrierWords,
  failedOutcome,
  fields,
  hexHmacMatches,
  isPdf,
  isSuccess,
  jsonOf,
  listOf,
  madeParcel,
  newsOf,
  notAnswered,
  pushedJson,
  reasonOf,
  text,
  UNPUBLISHED_RATE,
} from './common';
import type { CarrierAnswer, CarrierMeaning, CarrierRequest, CarrierSession, CreateOutcome, ParcelRequest, ShippingAdapter } from './types';

/**
 * Sendit (Morocco), https://app.sendit.ma/api/v1: a bearer token from `POST /login` with the
 * account's public and secret keys, kept in the session's memo and renewed once on a 401.
 */

const STATUSES: Record<string, CarrierMeaning> = {
  PENDING: 'shipped',
  TO_PREPARE: 'shipped',
  TO_PICKUP: 'shipped',
  PICKEDUP: 'shipped',
  WAREHOUSE: 'in_transit',
  TRANSIT: 'in_transit',
  NEW_DESTINATION: 'in_transit',
  DISTRIBUTED: 'out_for_delivery',
  DELIVERING: 'out_for_delivery',
  DELIVERED: 'delivered',
  REJECTED: 'refused',
  RETURNED: 'returned',
  UNREACHABLE: 'attempted',
  POSTPONED: 'attempted',
  CANCELED: 'cancelled',
};

/** Pages of districts read at most (Sendit has ~1,500 districts, a few dozen pages). */
const MAX_PAGES = 200;

type Login = { token: string } | { refused: CarrierAnswer };

async function login(session: CarrierSession): Promise<Login> {
  const answer = await session.request({
    method: 'POST',
    path: '/login',
    json: { public_key: session.credentials.public_key, secret_key: session.credentials.secret_key },
  });
  const token = text(fields(fields(jsonOf(answer)).data).token);
  if (!isSuccess(answer) || !token) return { refused: answer };
  session.memo.set('token', token);
  return { token };
}

/** An answer, and whether it is the login's (refused) rather than the call's. */
interface Authed {
  answer: CarrierAnswer;
  byLogin: boolean;
}

/**
 * A call with the bearer token: logs in when there is none, and once more on a 401 (the token
 * expired). A refused login is answered as the carrier gave it.
 */
async function authed(session: CarrierSession, req: CarrierRequest): Promise<Authed> {
  const send = async (token: string) => ({
    answer: await session.request({ ...req, headers: { ...req.headers, authorization: `Bearer ${token}` } }),
    byLogin: false,
  });
  const kept = session.memo.get('token');
  if (kept) {
    const sent = await send(kept);
    if (sent.answer.status !== 401) return sent;
    session.memo.delete('token');
  }
  const fresh = await login(session);
  return 'token' in fresh ? send(fresh.token) : { answer: fresh.refused, byLogin: true };
}

/** The outcome of a call: a login refused with a 4xx, or the call's 401/403 after a fresh login, is the credentials. */
function outcomeOf({ answer, byLogin }: Authed): CreateOutcome {
  const clientError = answer.status !== null && answer.status >= 400 && answer.status < 500 && answer.status !== 429;
  // Some answers to a wrong key are HTTP 200 with `success: false`.
  if (byLogin && (clientError || fields(jsonOf(answer)).success === false)) return { kind: 'credentials_refused', reason: carrierWords(answer) };
  if (byLogin && isSuccess(answer)) return { kind: 'unanswered', reason: 'the carrier gave no token' };
  return failedOutcome(answer);
}

/** Sendit's ids are numbers; a city's id is kept as text by us. */
const idOf = (city: CarrierCity | null): number | string => (city && /^\d+$/.test(city.id) ? Number(city.id) : (city?.id ?? ''));

function body(parcel: ParcelRequest) {
  return {
    pickup_district_id: idOf(parcel.pickupCity),
    district_id: idOf(parcel.city),
    name: parcel.name,
    phone: parcel.phone,
    address: parcel.address,
    amount: Math.round(parcel.amount),
    reference: parcel.reference,
    comment: parcel.note ?? '',
    allow_open: parcel.allowOpen ? 1 : 0,
    // Trying the goods on is more than opening the parcel: the shop's accounts say nothing of it.
    allow_try: 0,
    products: parcel.products,
    option_exchange: 0,
  };
}

/** A delivery as Sendit answers it (`data.code`, `data.status`, `data.labelUrl` or `label_url`). */
function deliveryOf(answer: CarrierAnswer) {
  const data = fields(fields(jsonOf(answer)).data);
  const code = text(data.code);
  return code ? madeParcel(code, data.labelUrl ?? data.label_url, data.status) : null;
}

async function createOne(session: CarrierSession, parcel: ParcelRequest): Promise<CreateOutcome> {
  const sent = await authed(session, { method: 'POST', path: '/deliveries', json: body(parcel) });
  const { answer } = sent;
  if (sent.byLogin || !isSuccess(answer)) return outcomeOf(sent);
  if (fields(jsonOf(answer)).success === false) return { kind: 'refused', reason: carrierWords(answer) };
  const made = deliveryOf(answer);
  // A 2xx without a code may still have made the parcel: it is looked up, not made again.
  return made ? { kind: 'created', parcel: made } : { kind: 'unanswered', reason: 'the carrier answered without a tracking number' };
}

function districts(answer: CarrierAnswer): { cities: CarrierCity[]; lastPage: number } {
  const json = jsonOf(answer);
  const cities = listOf(json).flatMap((item): CarrierCity[] => {
    const district = fields(item);
    const id = text(district.id);
    const name = text(district.name) || text(district.ville);
    return id && name ? [{ id, name, arabicName: text(district.arabic_name) || null }] : [];
  });
  const paging = [fields(json), fields(fields(json).data), fields(fields(json).meta)];
  const lastPage = Math.max(0, ...paging.map((part) => Number(part.last_page) || 0));
  return { cities, lastPage };
}

export const sendit: ShippingAdapter = {
  kind: 'sendit',
  title: 'Sendit',
  originSetting: 'SENDIT_API_ORIGIN',
  defaultOrigin: 'https://app.sendit.ma/api/v1',
  credentials: [
    { name: 'public_key', secret: true },
    { name: 'secret_key', secret: true },
  ],
  needsPickupCity: true,
  limits: UNPUBLISHED_RATE,
  push: 'signed',
  pushSecret: 'secret_key',

  async check(session) {
    const logged = await login(session);
    if ('token' in logged) return null;
    const outcome = outcomeOf({ answer: logged.refused, byLogin: true });
    if (outcome.kind === 'credentials_refused') return { field: 'secret_key', reason: outcome.reason };
    return { field: 'secret_key', reason: notAnswered(logged.refused) };
  },

  async cities(session) {
    const all: CarrierCity[] = [];
    for (let page = 1; page <= MAX_PAGES; page++) {
      const { answer } = await authed(session, { method: 'GET', path: `/districts?page=${page}` });
      if (!isSuccess(answer)) throw new Error(`Sendit's districts: ${carrierWords(answer)}`);
      const { cities, lastPage } = districts(answer);
      all.push(...cities);
      if (cities.length === 0 || page >= lastPage) break;
    }
    return all;
  },

  async create(session, parcels) {
    const outcomes = new Map<string, CreateOutcome>();
    for (const parcel of parcels) outcomes.set(parcel.reference, await createOne(session, parcel));
    return outcomes;
  },

  async lookup(session, _reference, tracking) {
    // Sendit is asked by its code only: a parcel whose answer was lost before we read its code cannot be found by our reference.
    if (!tracking) return { kind: 'cannot_tell', reason: 'Sendit cannot be asked by our reference' };
    const { answer } = await authed(session, { method: 'GET', path: `/deliveries/${encodeURIComponent(tracking)}` });
    if (answer.status === 404) return { kind: 'absent' };
    const made = isSuccess(answer) ? deliveryOf(answer) : null;
    return made ? { kind: 'found', parcel: made } : { kind: 'cannot_tell', reason: carrierWords(answer) };
  },

  async cancel(session, tracking) {
    const { answer } = await authed(session, { method: 'DELETE', path: `/deliveries/${encodeURIComponent(tracking)}` });
    if (isSuccess(answer) && fields(jsonOf(answer)).success !== false) return { cancelled: true, reason: null };
    return { cancelled: false, reason: answer.status === null ? reasonOf(answer.failure ?? 'no answer') : carrierWords(answer) };
  },

  async label(session, parcel) {
    let url = parcel.labelUrl;
    if (!url) {
      const found = await sendit.lookup?.(session, '', parcel.tracking);
      url = found?.kind === 'found' ? found.parcel.labelUrl : null;
    }
    if (!url) return null;
    // The label's URL is Sendit's own link to the PDF: followed without our token (it may be on another host).
    const answer = await session.request({ method: 'GET', path: url, headers: { accept: 'application/pdf' }, maxBytes: LABEL_MAX_BYTES });
    if (!isSuccess(answer) || !isPdf(answer.body))
      throw new Error(`Sendit's label: ${answer.status === null ? answer.failure : `HTTP ${answer.status}, not a PDF`}`);
    return answer.body;
  },

  async status(session, tracking) {
    const found = await sendit.lookup?.(session, '', tracking);
    if (found?.kind !== 'found') return null;
    return found.parcel.carrierStatus ? { tracking, words: found.parcel.carrierStatus, at: null } : null;
  },

  readPush(raw, headers, _query, secret) {
    if (!hexHmacMatches(raw, secret, headers, 'x-sendit-signature')) return { kind: 'unverified' };
    const json = fields(pushedJson(raw));
    if (Object.keys(json).length === 0) return { kind: 'unreadable' };
    const event = text(json.event) || text(json.type);
    if (event && event !== 'delivery.status.update') return { kind: 'ignored' };
    const data = fields(json.data ?? json);
    return newsOf([{ tracking: text(data.code), words: text(data.newStatus), at: carrierTime(data.lastActionAt) }]);
  },

  meaning(words) {
    return STATUSES[words.trim().toUpperCase()];
  },
};
