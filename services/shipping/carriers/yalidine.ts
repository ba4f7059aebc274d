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
  retryAfterMs,
  text,
  wordKey,
} from './common';
import type { CarrierAnswer, CarrierMeaning, CarrierRequest, CarrierSession, CreateOutcome, MadeParcel, ParcelRequest, ShippingAdapter } from './types';

/**
 * Yalidine (Algeria), https://api.yalidine.app/v1: `X-API-ID` and `X-API-TOKEN` on every call;
 * parcels made 50 at a time, answered by `order_id`. Its quotas (5 a second, 50 a minute, 1,000
 * an hour, 10,000 a day) come back in `x-{second,minute,hour,day}-quota-left` on every answer; each
 * window resets its length after its first request, which we do not see, so a window found empty
 * (in the headers or by a 429) is waited out whole: the next call is never sooner than it.
 */

const STATUSES = new Map<string, CarrierMeaning>(
  (
    [
      ['Expédié', 'shipped'],
      ['En préparation', 'shipped'],
      ['Vers Wilaya', 'in_transit'],
      ['Centre', 'in_transit'],
      ['Sorti en livraison', 'out_for_delivery'],
      ['Livré', 'delivered'],
      ['Echèc livraison', 'refused'],
      ['Retourné au vendeur', 'returned'],
      ['Tentative échouée', 'attempted'],
    ] as const
  ).map(([word, meaning]) => [wordKey(word), meaning]),
);

const WINDOWS = { second: 1000, minute: 60_000, hour: 3_600_000, day: 86_400_000 } as const;
const QUOTA_UNTIL = 'quota-until';
/** Parcels per POST /parcels, as Yalidine takes them. */
const BATCH = 50;
/** Pages of communes read at most (~1,500 communes). */
const MAX_PAGES = 50;

/** The longest window the answer's headers say is used up, in milliseconds; 0 when none is. */
function emptiedWindow(answer: CarrierAnswer): number {
  let longest = 0;
  for (const [window, length] of Object.entries(WINDOWS)) {
    const left = answer.headers[`x-${window}-quota-left`];
    if (left !== undefined && Number(left) <= 0) longest = Math.max(longest, length);
  }
  return longest;
}

/** Until when the account must not call, kept from the last answers (ms since the epoch; 0: free). */
const heldUntil = (session: CarrierSession): number => Number(session.memo.get(QUOTA_UNTIL) ?? 0);

/** Reads the quotas of an answer: a used-up window (or a 429) holds the account back for that window, and no less than Retry-After. */
function noteQuotas(session: CarrierSession, answer: CarrierAnswer): void {
  let wait = emptiedWindow(answer);
  if (answer.status === 429) wait = Math.max(wait || WINDOWS.second, retryAfterMs(answer) ?? 0);
  if (wait > 0) session.memo.set(QUOTA_UNTIL, String(Math.max(heldUntil(session), Date.now() + wait)));
}

/** A 429 that was never sent: the account is held back by its quotas. */
function held(until: number): CarrierAnswer {
  return { status: 429, headers: { 'retry-after': String((until - Date.now()) / 1000) }, body: Buffer.from('{"message":"quota used up"}'), failure: null };
}

async function call(session: CarrierSession, req: CarrierRequest): Promise<CarrierAnswer> {
  const until = heldUntil(session);
  if (until > Date.now()) return held(until);
  const { api_id = '', api_token = '' } = session.credentials;
  const answer = await session.request({ ...req, headers: { ...req.headers, 'x-api-id': api_id, 'x-api-token': api_token } });
  noteQuotas(session, answer);
  return answer;
}

/** Yalidine's error body is `{error: {code, message}}`. */
function reasonIn(answer: CarrierAnswer): string {
  const error = fields(fields(jsonOf(answer)).error);
  return text(error.message) ? reasonOf(text(error.message)) : carrierWords(answer);
}

/** A failed answer's outcome; a 429 (sent or held back) waits for the window the quotas say. */
function outcomeOf(session: CarrierSession, answer: CarrierAnswer): CreateOutcome {
  if (answer.status === 429) return { kind: 'throttled', retryAfterMs: Math.max(1, heldUntil(session) - Date.now()) };
  const outcome = failedOutcome(answer);
  return outcome.kind === 'refused' || outcome.kind === 'credentials_refused' ? { ...outcome, reason: reasonIn(answer) } : outcome;
}

/** Reads all pages of a list (`has_more`), within the bound. */
async function allPages(session: CarrierSession, path: string): Promise<unknown[]> {
  const items: unknown[] = [];
  for (let page = 1; page <= MAX_PAGES; page++) {
    const answer = await call(session, { method: 'GET', path: `${path}?page=${page}` });
    if (!isSuccess(answer)) throw new Error(`Yalidine's ${path.slice(1)}: ${answer.status === null ? answer.failure : reasonIn(answer)}`);
    items.push(...listOf(jsonOf(answer)));
    if (fields(jsonOf(answer)).has_more !== true) break;
  }
  return items;
}

/**
 * A commune as a city of ours: its id carries its wilaya's name after a `|` (Yalidine wants both
 * names, and a city of ours has one), so a parcel needs no second list.
 */
const wilayaOf = (city: CarrierCity): string => (city.id.includes('|') ? city.id.slice(city.id.indexOf('|') + 1) : city.name);

function parcelBody(parcel: ParcelRequest) {
  const [firstname, ...rest] = parcel.name.trim().split(/\s+/);
  const price = Math.round(parcel.amount);
  return {
    order_id: parcel.reference,
    from_wilaya_name: parcel.pickupCity ? wilayaOf(parcel.pickupCity) : '',
    firstname,
    // Yalidine wants both names; a customer known by one name gives it twice.
    familyname: rest.join(' ') || firstname,
    contact_phone: parcel.phone,
    address: parcel.address,
    to_commune_name: parcel.city.name,
    to_wilaya_name: wilayaOf(parcel.city),
    product_list: parcel.products,
    price,
    do_insurance: false,
    declared_value: price,
    freeshipping: false,
    is_stopdesk: false,
    has_exchange: false,
    // The shop's orders carry no sizes: Yalidine's smallest parcel.
    length: 0,
    width: 0,
    height: 0,
    weight: 1,
  };
}

/** One POST /parcels of at most 50, each parcel's outcome read by its order_id. */
async function createBatch(session: CarrierSession, parcels: readonly ParcelRequest[]): Promise<Map<string, CreateOutcome>> {
  const answer = await call(session, { method: 'POST', path: '/parcels', json: parcels.map(parcelBody) });
  const byOrder = fields(jsonOf(answer));
  return new Map(
    parcels.map((parcel): [string, CreateOutcome] => {
      const made = fields(byOrder[parcel.reference]);
      if (!isSuccess(answer)) return [parcel.reference, outcomeOf(session, answer)];
      if (made.success === true && text(made.tracking))
        return [parcel.reference, { kind: 'created', parcel: madeParcel(text(made.tracking), made.label ?? made.labels, 'En préparation') }];
      if (made.success === false) return [parcel.reference, { kind: 'refused', reason: reasonOf(text(made.message) || 'refused by Yalidine') }];
      return [parcel.reference, { kind: 'unanswered', reason: 'the carrier answered without this parcel' }];
    }),
  );
}

/** The parcels Yalidine holds with a `GET /parcels?…` question. */
async function parcelsWhere(session: CarrierSession, query: string): Promise<{ answer: CarrierAnswer; parcels: MadeParcel[] }> {
  const answer = await call(session, { method: 'GET', path: `/parcels?${query}` });
  const parcels = isSuccess(answer)
    ? listOf(jsonOf(answer)).flatMap((item) => {
        const parcel = fields(item);
        return text(parcel.tracking) ? [madeParcel(text(parcel.tracking), parcel.label, parcel.last_status)] : [];
      })
    : [];
  return { answer, parcels };
}

export const yalidine: ShippingAdapter = {
  kind: 'yalidine',
  title: 'Yalidine',
  originSetting: 'YALIDINE_API_ORIGIN',
  defaultOrigin: 'https://api.yalidine.app/v1',
  credentials: [
    { name: 'api_id', secret: true },
    { name: 'api_token', secret: true },
    { name: 'webhook_secret', secret: true },
  ],
  needsPickupCity: true,
  limits: { perSecond: 5, concurrency: 4, batch: BATCH },
  push: 'signed',
  pushSecret: 'webhook_secret',

  async check(session) {
    const answer = await call(session, { method: 'GET', path: '/wilayas?page=1' });
    if (isSuccess(answer)) return null;
    if (answer.status === 401 || answer.status === 403) return { field: 'api_token', reason: reasonIn(answer) };
    return { field: 'api_token', reason: notAnswered(answer) };
  },

  async cities(session) {
    const wilayas = new Map((await allPages(session, '/wilayas')).map((item) => [text(fields(item).id), text(fields(item).name)]));
    return (await allPages(session, '/communes')).flatMap((item): CarrierCity[] => {
      const commune = fields(item);
      const wilaya = text(commune.wilaya_name) || wilayas.get(text(commune.wilaya_id)) || '';
      const name = text(commune.name);
      return name && wilaya && text(commune.id) ? [{ id: `${text(commune.id)}|${wilaya}`, name, arabicName: null }] : [];
    });
  },

  async create(session, parcels) {
    const outcomes = new Map<string, CreateOutcome>();
    for (let i = 0; i < parcels.length; i += BATCH)
      for (const [reference, outcome] of await createBatch(session, parcels.slice(i, i + BATCH))) outcomes.set(reference, outcome);
    return outcomes;
  },

  async lookup(session, reference) {
    const { answer, parcels } = await parcelsWhere(session, `order_id=${encodeURIComponent(reference)}`);
    // Over a quota (sent, or held back by the headers): asked again once the window has passed, never decided on it.
    if (answer.status === 429) return { kind: 'throttled', retryAfterMs: Math.max(1, heldUntil(session) - Date.now()) };
    if (answer.status === null || answer.status >= 500)
      return { kind: 'unanswered', reason: answer.status === null ? reasonOf(answer.failure ?? 'no answer') : reasonIn(answer) };
    if (!isSuccess(answer)) return { kind: 'cannot_tell', reason: reasonIn(answer) };
    return parcels[0] ? { kind: 'found', parcel: parcels[0] } : { kind: 'absent' };
  },

  /** Yalidine deletes a parcel only while it is "En préparation": asked first, so a parcel on its way is never asked to go. */
  async cancel(session, tracking) {
    const { answer, parcels } = await parcelsWhere(session, `tracking=${encodeURIComponent(tracking)}`);
    if (!isSuccess(answer)) return { cancelled: false, reason: answer.status === null ? reasonOf(answer.failure ?? 'no answer') : reasonIn(answer) };
    const state = parcels[0]?.carrierStatus ?? '';
    if (wordKey(state) !== wordKey('En préparation')) return { cancelled: false, reason: reasonOf(state || 'unknown parcel') };
    const deleted = await call(session, { method: 'DELETE', path: `/parcels/${encodeURIComponent(tracking)}` });
    if (!isSuccess(deleted)) return { cancelled: false, reason: deleted.status === null ? reasonOf(deleted.failure ?? 'no answer') : reasonIn(deleted) };
    const line = fields(listOf(jsonOf(deleted))[0] ?? jsonOf(deleted));
    return line.deleted === true ? { cancelled: true, reason: null } : { cancelled: false, reason: reasonOf(text(line.message) || state) };
  },

  async label(session, parcel) {
    let url = parcel.labelUrl;
    if (!url) url = (await parcelsWhere(session, `tracking=${encodeURIComponent(parcel.tracking)}`)).parcels[0]?.labelUrl ?? null;
    if (!url) return null;
    // Yalidine's link to the label, followed without the account's keys (it may be on another host).
    const answer = await session.request({ method: 'GET', path: url, headers: { accept: 'application/pdf' }, maxBytes: LABEL_MAX_BYTES });
    if (!isSuccess(answer) || !isPdf(answer.body))
      throw new Error(`Yalidine's label: ${answer.status === null ? answer.failure : `HTTP ${answer.status}, not a PDF`}`);
    return answer.body;
  },

  readPush(raw, headers, query, secret) {
    // The subscription check is a GET without a body: the token answered as given.
    if ('subscribe' in query && query.crc_token) return { kind: 'challenge', answer: query.crc_token };
    if (!hexHmacMatches(raw, secret, headers, 'x-yalidine-signature')) return { kind: 'unverified' };
    const json = fields(pushedJson(raw));
    if (!Array.isArray(json.events)) return { kind: 'unreadable' };
    if (text(json.type) !== 'parcel_status_updated') return { kind: 'ignored' };
    return newsOf(
      json.events.map((event) => {
        const data = fields(fields(event).data);
        return { tracking: text(data.tracking), words: text(data.status), at: carrierTime(fields(event).occurred_at) };
      }),
    );
  },

  meaning(words) {
    return STATUSES.get(wordKey(words));
  },
};
