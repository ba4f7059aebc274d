import type { CarrierCity } from '../cities';
import {
  carrierTime,
  failedOutcome,
  fields,
  isSuccess,
  jsonOf,
  newsOf,
  notAnswered,
  pushedJson,
  reasonOf,
  text,
  twoDecimals,
  UNPUBLISHED_RATE,
} from './common';
import type { CarrierAnswer, CarrierMeaning, CarrierSession, CreateOutcome, ParcelRequest, ShippingAdapter } from './types';

/**
 * Ozon Express (Morocco), https://api.ozonexpress.ma: the customer id and API key in the path, a
 * multipart form, and every answer HTTP 200 — a refusal is `RESULT: ERROR` in the body, and wrong
 * credentials are `CHECK_API: {RESULT: ERROR}`. No status look-up, no cancel, no label through the
 * API: its news comes by push, unsigned, to a URL that carries our token.
 */

const STATUSES: Record<string, CarrierMeaning> = {
  NEW_PARCEL: 'shipped',
  WAITING_PICKUP: 'shipped',
  PICKED_UP: 'shipped',
  SENT: 'shipped',
  RECEIVED: 'in_transit',
  DISTRIBUTION: 'out_for_delivery',
  IN_PROGRESS: 'out_for_delivery',
  DELIVERED: 'delivered',
  PAID: 'delivered',
  REFUSE: 'refused',
  RETURNED: 'returned',
  POSTPONED: 'attempted',
  CANCELED: 'cancelled',
};

/** The account's own path: its id and key, each as one path segment. */
function customerPath(session: CarrierSession, action: string): string {
  const { customer_id: id = '', api_key: key = '' } = session.credentials;
  return `/customers/${encodeURIComponent(id)}/${encodeURIComponent(key)}/${action}`;
}

/** `CHECK_API: {RESULT: ERROR}`: the id or key is not the account's. */
function credentialsError(answer: CarrierAnswer): string | null {
  const check = fields(fields(jsonOf(answer)).CHECK_API);
  return text(check.RESULT).toUpperCase() === 'ERROR' ? reasonOf(text(check.MESSAGE) || 'credentials refused') : null;
}

function form(parcel: ParcelRequest): Record<string, string> {
  return {
    'parcel-receiver': parcel.name,
    'parcel-phone': parcel.phone,
    'parcel-city': parcel.city.id,
    'parcel-address': parcel.address,
    'parcel-price': String(twoDecimals(parcel.amount)),
    'parcel-note': parcel.note ?? '',
    'parcel-nature': parcel.products,
    'parcel-open': parcel.allowOpen ? '1' : '2',
    'parcel-stock': '0',
    'tracking-number': '',
  };
}

async function createOne(session: CarrierSession, parcel: ParcelRequest): Promise<CreateOutcome> {
  const answer = await session.request({ method: 'POST', path: customerPath(session, 'add-parcel'), form: form(parcel) });
  if (!isSuccess(answer)) return failedOutcome(answer);
  const refusedCredentials = credentialsError(answer);
  if (refusedCredentials) return { kind: 'credentials_refused', reason: refusedCredentials };
  const added = fields(fields(jsonOf(answer))['ADD-PARCEL']);
  const result = text(added.RESULT).toUpperCase();
  if (result === 'ERROR') return { kind: 'refused', reason: reasonOf(text(added.MESSAGE) || 'refused by Ozon Express') };
  const tracking = text(fields(added['NEW-PARCEL'])['TRACKING-NUMBER']);
  if (result === 'SUCCESS' && tracking) return { kind: 'created', parcel: { tracking, labelUrl: null, carrierStatus: null } };
  return { kind: 'unanswered', reason: 'the carrier answered without a tracking number' };
}

export const ozonExpress: ShippingAdapter = {
  kind: 'ozon_express',
  title: 'Ozon Express',
  originSetting: 'OZON_API_ORIGIN',
  defaultOrigin: 'https://api.ozonexpress.ma',
  credentials: [
    { name: 'customer_id', secret: false },
    { name: 'api_key', secret: true },
  ],
  needsPickupCity: false,
  limits: UNPUBLISHED_RATE,
  push: 'url_token',

  /** Ozon Express has no login: a tracking question about no parcel answers `CHECK_API` for the id and key. */
  async check(session) {
    const answer = await session.request({ method: 'POST', path: customerPath(session, 'tracking'), form: { 'tracking-number': 'CHECK' } });
    if (!isSuccess(answer)) return { field: 'api_key', reason: notAnswered(answer) };
    const refused = credentialsError(answer);
    return refused ? { field: 'api_key', reason: refused } : null;
  },

  async cities(session) {
    const answer = await session.request({ method: 'GET', path: '/cities' });
    const list = fields(fields(jsonOf(answer)).CITIES);
    if (!isSuccess(answer) || Object.keys(list).length === 0) throw new Error(`Ozon Express's cities: ${answer.failure ?? `HTTP ${answer.status}`}`);
    return Object.entries(list).flatMap(([key, value]): CarrierCity[] => {
      const city = fields(value);
      // Some names carry tabs and runs of spaces.
      const name = text(city.NAME).replace(/\s+/g, ' ');
      const id = text(city.ID) || key;
      return name ? [{ id, name, arabicName: null }] : [];
    });
  },

  async create(session, parcels) {
    const outcomes = new Map<string, CreateOutcome>();
    for (const parcel of parcels) outcomes.set(parcel.reference, await createOne(session, parcel));
    return outcomes;
  },

  /** Only reads: the machinery checked the URL's token before handing the body over. */
  readPush(raw) {
    const json = fields(pushedJson(raw));
    if (Object.keys(json).length === 0) return { kind: 'unreadable' };
    const tracking = text(json.tracking_number) || text(json['TRACKING-NUMBER']);
    const words = text(json.orderStatus);
    if (!tracking && !words) return { kind: 'ignored' };
    return newsOf([{ tracking, words, at: carrierTime(json.date ?? json.updated_at) }]);
  },

  meaning(words) {
    const code = words.trim().toUpperCase();
    // NOANSWER and its variants (NOANSWER_1, NOANSWER_2 …): the customer did not pick up.
    return code.startsWith('NOANSWER') ? 'attempted' : STATUSES[code];
  },
};
