import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignedSender } from '../../integrations/http';
import type { CarrierCity, CarrierSession, CreateOutcome, ParcelRequest, ShippingAdapter } from '../../services/shipping';
import { carrierSession } from '../../services/shipping';

/**
 * HTTP doubles of the four carriers on 127.0.0.1 (a real server on a random port each), answering
 * in the shapes the adapters read. Each records every request and holds the parcels it made; a test
 * flips switches (wrong credentials, a 5xx, the answer of a create lost after the parcel was made,
 * Ozon's HTTP-200 errors, Yalidine's quotas) and reads `requests` to assert what was sent.
 */

export interface RecordedRequest {
  method: string;
  /** Path and query, as received. */
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  // biome-ignore lint/suspicious/noExplicitAny: the JSON an adapter sent, read field by field by the tests
  json: any;
  /** A multipart form's fields (Ozon Express). */
  form: Record<string, string> | null;
  /** When it arrived (performance.now(), ms): the benchmark reads the carrier's rate from these. */
  at: number;
}

export interface DoubleParcel {
  tracking: string;
  reference: string;
  status: string;
  /** What the create call carried, as the carrier read it. */
  sent: unknown;
}

export interface DoubleOptions {
  /** Every answer waits this long (the benchmark's carrier answering in 50 ms). */
  latencyMs?: number;
  /**
   * How long a lost answer holds the socket before destroying it (default 6 s, twice a session's
   * time-out): a client with a shorter time-out sees a time-out, one with a longer one a connection reset.
   */
  lostAnswerHoldMs?: number;
}

/** What every double can be told to do. */
interface Switches {
  wrongCredentials: boolean;
  /** Every call answers HTTP 503. */
  serverError: boolean;
  /** A create makes the parcel, then its answer is lost: the socket is held `lostAnswerHoldMs`, then destroyed. */
  loseCreateAnswer: boolean;
  /** Every call answers HTTP 200 with an HTML page (a proxy's), which no adapter can read. */
  unreadable: boolean;
}

type Answer = { status: number; json?: unknown; bytes?: Buffer; headers?: Record<string, string> } | 'lost';

/**
 * A one-page PDF as carriers send labels: a real document (objects, cross-reference table, trailer)
 * that a PDF reader opens, with the tracking number written on the page.
 */
function labelPdf(tracking: string): Buffer {
  const text = `BT /F1 18 Tf 20 380 Td (${tracking.replace(/[()\\]/g, '')}) Tj ET`;
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 283 425] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    `<< /Length ${text.length} >>\nstream\n${text}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((object, i) => {
    offsets.push(out.length);
    out += `${i + 1} 0 obj\n${object}\nendobj\n`;
  });
  const xref = out.length;
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

async function formOf(body: Buffer, type: string | undefined): Promise<Record<string, string> | null> {
  if (!type?.startsWith('multipart/form-data')) return null;
  const form = await new Request('http://double.invalid/', { method: 'POST', body: new Uint8Array(body), headers: { 'content-type': type } }).formData();
  return Object.fromEntries([...form.entries()].map(([name, value]) => [name, String(value)]));
}

class CarrierDouble {
  url = '';
  readonly requests: RecordedRequest[] = [];
  /** The parcels the carrier holds, by tracking number. */
  readonly parcels = new Map<string, DoubleParcel>();
  readonly switches: Switches = { wrongCredentials: false, serverError: false, loseCreateAnswer: false, unreadable: false };
  /** The most requests it was answering at once. */
  maxInFlight = 0;
  private inFlight = 0;
  private readonly server: http.Server;
  private made = 0;

  constructor(
    private readonly answer: (req: RecordedRequest) => Answer | Promise<Answer>,
    private readonly options: DoubleOptions,
  ) {
    this.server = http.createServer((req, res) => this.serve(req, res));
  }

  async listen(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.closeAllConnections();
      this.server.close(() => resolve());
    });
  }

  /** A new tracking number with the carrier's prefix. */
  nextTracking(prefix: string): string {
    this.made += 1;
    return `${prefix}${String(100000 + this.made)}`;
  }

  /** The one parcel made with our reference, if any. */
  byReference(reference: string): DoubleParcel | undefined {
    return [...this.parcels.values()].find((parcel) => parcel.reference === reference);
  }

  private serve(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    this.inFlight += 1;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    res.on('close', () => {
      this.inFlight -= 1;
    });
    req.on('end', async () => {
      const body = Buffer.concat(chunks);
      let json: unknown;
      try {
        json = JSON.parse(body.toString('utf8'));
      } catch {}
      const recorded = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body,
        json,
        form: await formOf(body, req.headers['content-type']),
        at: performance.now(),
      };
      this.requests.push(recorded);
      if (this.options.latencyMs) await new Promise((resolve) => setTimeout(resolve, this.options.latencyMs));
      const answer: Answer = this.switches.serverError ? { status: 503, json: { message: 'Service Unavailable' } } : await this.answer(recorded);
      // The parcel is made; its answer never comes: the socket is held, then destroyed.
      if (answer === 'lost') {
        setTimeout(() => req.socket.destroy(), this.options.lostAnswerHoldMs ?? 6000).unref();
        return;
      }
      if (this.switches.unreadable) {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('<html><body>502 Bad Gateway</body></html>');
        return;
      }
      const headers = { ...answer.headers };
      if (answer.bytes) {
        res.writeHead(answer.status, { 'content-type': 'application/pdf', ...headers });
        res.end(answer.bytes);
      } else {
        res.writeHead(answer.status, { 'content-type': 'application/json', ...headers });
        res.end(JSON.stringify(answer.json ?? {}));
      }
    });
  }
}

// ----------------------------------------------------------------------------------------------
// Sendit
// ----------------------------------------------------------------------------------------------

export const SENDIT_KEYS = { public_key: 'pk_test_4f1c', secret_key: 'sk_test_9a7e3b' };

/** Sendit's districts: 7 of them, 3 per page. */
const SENDIT_DISTRICTS = [
  { id: 1, ville: 'Casablanca', name: 'Casablanca', arabic_name: 'الدار البيضاء', price: 20 },
  { id: 2, ville: 'Rabat', name: 'Rabat', arabic_name: 'الرباط', price: 30 },
  { id: 3, ville: 'Fes', name: 'Fes', arabic_name: 'فاس', price: 35 },
  { id: 4, ville: 'Marrakech', name: 'Marrakech', arabic_name: null, price: 35 },
  { id: 5, ville: 'Tanger', name: 'Tanger', arabic_name: 'طنجة', price: 35 },
  { id: 6, ville: 'Agadir', name: 'Agadir', arabic_name: null, price: 40 },
  { id: 7, ville: 'Casablanca', name: 'Casablanca - Maarif', arabic_name: null, price: 20 },
];

export async function senditDouble(options: DoubleOptions = {}) {
  const tokens = new Set<string>();
  /** The status of a refused login: 401, or 200 with `success: false` as some of Sendit's answers are. */
  const behaviour = { loginRefusalStatus: 401 };
  const double: CarrierDouble = new CarrierDouble((req) => {
    const url = new URL(req.path, 'http://double');
    if (req.method === 'POST' && url.pathname === '/login') {
      const right = !double.switches.wrongCredentials && req.json?.public_key === SENDIT_KEYS.public_key && req.json?.secret_key === SENDIT_KEYS.secret_key;
      if (!right) return { status: behaviour.loginRefusalStatus, json: { success: false, message: 'Identifiants incorrects' } };
      const token = `tok_${tokens.size + 1}_${Date.now()}`;
      tokens.add(token);
      return { status: 200, json: { success: true, data: { token } } };
    }
    const label = /^\/labels\/([\w-]+)\.pdf$/.exec(url.pathname);
    if (req.method === 'GET' && label) return double.parcels.has(label[1]) ? { status: 200, bytes: labelPdf(label[1]) } : { status: 404, json: {} };
    const bearer = /^Bearer (.+)$/.exec(String(req.headers.authorization ?? ''))?.[1];
    if (!bearer || !tokens.has(bearer)) return { status: 401, json: { success: false, message: 'Unauthenticated.' } };
    if (req.method === 'GET' && url.pathname === '/districts') {
      const page = Number(url.searchParams.get('page') ?? 1);
      const data = SENDIT_DISTRICTS.slice((page - 1) * 3, page * 3);
      return { status: 200, json: { success: true, data: { current_page: page, last_page: Math.ceil(SENDIT_DISTRICTS.length / 3), data } } };
    }
    if (req.method === 'POST' && url.pathname === '/deliveries') {
      const body = req.json ?? {};
      const errors: Record<string, string[]> = {};
      if (!SENDIT_DISTRICTS.some((d) => d.id === body.district_id)) errors.district_id = ['Le quartier sélectionné est invalide.'];
      if (!/^0\d{9}$/.test(String(body.phone))) errors.phone = ['Le numéro de téléphone est invalide.'];
      if (!Number.isInteger(body.amount)) errors.amount = ['Le montant doit être un entier.'];
      if (Object.keys(errors).length > 0) return { status: 422, json: { success: false, message: 'Les données sont invalides.', errors } };
      const code = double.nextTracking('SD');
      double.parcels.set(code, { tracking: code, reference: String(body.reference), status: 'PENDING', sent: body });
      if (double.switches.loseCreateAnswer) return 'lost';
      return { status: 200, json: { success: true, data: { code, status: 'PENDING', labelUrl: `${double.url}/labels/${code}.pdf` } } };
    }
    const delivery = /^\/deliveries\/([\w-]+)$/.exec(url.pathname);
    const parcel = delivery && double.parcels.get(delivery[1]);
    if (delivery && !parcel) return { status: 404, json: { success: false, message: 'Colis introuvable' } };
    if (parcel && req.method === 'GET')
      return {
        status: 200,
        json: { success: true, data: { code: parcel.tracking, status: parcel.status, labelUrl: `${double.url}/labels/${parcel.tracking}.pdf` } },
      };
    if (parcel && req.method === 'DELETE') {
      if (!['PENDING', 'TO_PREPARE'].includes(parcel.status)) return { status: 422, json: { success: false, message: 'Ce colis ne peut plus être annulé' } };
      parcel.status = 'CANCELED';
      return { status: 200, json: { success: true, message: 'Colis annulé' } };
    }
    return { status: 404, json: { message: 'Not found' } };
  }, options);
  return Object.assign(await double.listen(), {
    behaviour,
    /** Every token given so far stops working (as when they expire). */
    expireTokens: () => tokens.clear(),
  });
}

// ----------------------------------------------------------------------------------------------
// Ozon Express
// ----------------------------------------------------------------------------------------------

export const OZON_KEYS = { customer_id: '24539', api_key: '002b25-110795-e1cdcf-be7ffc-660fc2' };

const OZON_CITIES = {
  '37': { ID: 37, REF: 'AGA', NAME: 'Agadir', 'DELIVERED-PRICE': 35, 'RETURNED-PRICE': 0, 'REFUSED-PRICE': 10 },
  '95': { ID: 95, REF: 'CAS', NAME: 'Casablanca - Maarif', 'DELIVERED-PRICE': 20, 'RETURNED-PRICE': 0, 'REFUSED-PRICE': 10 },
  '112': { ID: 112, REF: 'FES', NAME: 'Fès', 'DELIVERED-PRICE': 35, 'RETURNED-PRICE': 0, 'REFUSED-PRICE': 10 },
};

export async function ozonDouble(options: DoubleOptions = {}) {
  let refusal: string | null = null;
  const double: CarrierDouble = new CarrierDouble((req) => {
    const url = new URL(req.path, 'http://double');
    if (req.method === 'GET' && url.pathname === '/cities') return { status: 200, json: { CITIES: OZON_CITIES, DEBUG: null } };
    const call = /^\/customers\/([^/]+)\/([^/]+)\/([\w-]+)$/.exec(url.pathname);
    if (!call || req.method !== 'POST') return { status: 404, json: {} };
    const [, id, key, action] = call;
    if (double.switches.wrongCredentials || id !== OZON_KEYS.customer_id || key !== OZON_KEYS.api_key)
      return { status: 200, json: { CHECK_API: { RESULT: 'ERROR', MESSAGE: 'Please verify your API Key' } } };
    const form = req.form ?? {};
    if (action === 'tracking') {
      const parcel = double.parcels.get(form['tracking-number']);
      const tracking = parcel
        ? { RESULT: 'SUCCESS', 'TRACKING-NUMBER': parcel.tracking, LAST_TRACKING: { STATUT: parcel.status } }
        : { RESULT: 'ERROR', MESSAGE: 'Colis introuvable' };
      return { status: 200, json: { CHECK_API: { RESULT: 'SUCCESS' }, TRACKING: tracking } };
    }
    if (action !== 'add-parcel') return { status: 404, json: {} };
    const error = (MESSAGE: string) => ({ status: 200, json: { CHECK_API: { RESULT: 'SUCCESS' }, 'ADD-PARCEL': { RESULT: 'ERROR', MESSAGE } } });
    if (refusal) return error(refusal);
    if (!(form['parcel-city'] in OZON_CITIES)) return error('Ville introuvable');
    if (!/^0\d{9}$/.test(form['parcel-phone'] ?? '')) return error('Numéro de téléphone invalide');
    const tracking = double.nextTracking('OZ');
    // Ozon Express keeps no reference of ours: a parcel is known by its tracking number alone.
    double.parcels.set(tracking, { tracking, reference: '', status: 'NEW_PARCEL', sent: form });
    if (double.switches.loseCreateAnswer) return 'lost';
    const city = OZON_CITIES[form['parcel-city'] as keyof typeof OZON_CITIES];
    return {
      status: 200,
      json: {
        CHECK_API: { RESULT: 'SUCCESS' },
        'ADD-PARCEL': {
          RESULT: 'SUCCESS',
          MESSAGE: 'Colis ajouté',
          'NEW-PARCEL': { 'TRACKING-NUMBER': tracking, RECEIVER: form['parcel-receiver'], CITY_ID: city.ID, CITY_NAME: city.NAME, PRICE: form['parcel-price'] },
        },
      },
    };
  }, options);
  return Object.assign(await double.listen(), {
    /** Every add-parcel answers HTTP 200 with `RESULT: ERROR` and this message (null: back to normal). */
    refuseWith: (message: string | null) => {
      refusal = message;
    },
  });
}

// ----------------------------------------------------------------------------------------------
// Digylog
// ----------------------------------------------------------------------------------------------

export const DIGYLOG_KEYS = { token: 'dg_live_7f3a19c2', store: 'Babouche Shop', network: '3' };
export const DIGYLOG_REFERER = 'https://apiseller.digylog.com';
const DIGYLOG_CITIES = [
  { id: 1, name: 'Casablanca' },
  { id: 2, name: 'Rabat' },
  { id: 3, name: 'Fès' },
];

export async function digylogDouble(options: DoubleOptions = {}) {
  /** Whether a refused duplicate names the tracking number of the parcel it already holds. */
  const behaviour = { duplicateGivesTracking: true };
  const double: CarrierDouble = new CarrierDouble((req) => {
    const url = new URL(req.path, 'http://double');
    if (double.switches.wrongCredentials || req.headers.authorization !== `Bearer ${DIGYLOG_KEYS.token}` || req.headers.referer !== DIGYLOG_REFERER)
      return { status: 401, json: { message: 'Unauthenticated.' } };
    if (req.method === 'GET' && url.pathname === '/stores') return { status: 200, json: [{ id: 11, name: DIGYLOG_KEYS.store }] };
    if (req.method === 'GET' && url.pathname === '/networks') return { status: 200, json: [{ id: 3, name: 'Digylog Express' }] };
    if (req.method === 'GET' && url.pathname === '/cities') return { status: 200, json: DIGYLOG_CITIES };
    if (req.method === 'POST' && url.pathname === '/orders') {
      const body = req.json ?? {};
      let madeOne = false;
      const results = (body.orders ?? []).map((order: Record<string, unknown>) => {
        const held = double.byReference(String(order.num));
        if (held && body.checkDuplicate === 1)
          return {
            isSuccess: false,
            errors: ['Commande déjà existante'],
            num: order.num,
            ...(behaviour.duplicateGivesTracking ? { tracking: held.tracking } : {}),
          };
        if (!DIGYLOG_CITIES.some((c) => c.name === order.city)) return { isSuccess: false, errors: ['Ville non desservie'], num: order.num };
        const tracking = double.nextTracking('DG');
        double.parcels.set(tracking, { tracking, reference: String(order.num), status: 'Nouveau', sent: body });
        madeOne = true;
        return { isSuccess: true, errors: [], num: order.num, tracking };
      });
      if (madeOne && double.switches.loseCreateAnswer) return 'lost';
      return { status: 200, json: results };
    }
    const infos = /^\/order\/([\w-]+)\/infos$/.exec(url.pathname);
    if (req.method === 'GET' && infos) {
      const parcel = double.parcels.get(infos[1]);
      return parcel
        ? { status: 200, json: { tracking: parcel.tracking, num: parcel.reference, status: parcel.status, updated_at: '2026-11-27 15:02:11' } }
        : { status: 404, json: { message: 'Commande introuvable' } };
    }
    if (req.method === 'POST' && url.pathname === '/labels') {
      const [tracking] = req.json?.orders ?? [];
      return double.parcels.has(tracking) ? { status: 200, bytes: labelPdf(tracking) } : { status: 404, json: { message: 'Commande introuvable' } };
    }
    return { status: 404, json: { message: 'Not found' } };
  }, options);
  return Object.assign(await double.listen(), { behaviour });
}

// ----------------------------------------------------------------------------------------------
// Yalidine
// ----------------------------------------------------------------------------------------------

export const YALIDINE_KEYS = { api_id: '08467939841238704523', api_token: 'yal_tok_Qm9WbJ3kq', webhook_secret: 'whsec_yal_51f0' };
const YALIDINE_WILAYAS = [
  { id: 16, name: 'Alger' },
  { id: 31, name: 'Oran' },
];
const YALIDINE_COMMUNES = [
  { id: 1601, name: 'Alger Centre', wilaya_id: 16, wilaya_name: 'Alger', has_stop_desk: 1, is_deliverable: 1 },
  { id: 1602, name: 'Bab El Oued', wilaya_id: 16, wilaya_name: 'Alger', has_stop_desk: 0, is_deliverable: 1 },
  { id: 3101, name: 'Oran', wilaya_id: 31, wilaya_name: 'Oran', has_stop_desk: 1, is_deliverable: 1 },
];

const WINDOWS = { second: 1000, minute: 60_000, hour: 3_600_000, day: 86_400_000 } as const;
type Window = keyof typeof WINDOWS;

export async function yalidineDouble(options: DoubleOptions & { limits?: Partial<Record<Window, number>> } = {}) {
  const limits: Record<Window, number> = { second: 5, minute: 50, hour: 1000, day: 10_000, ...options.limits };
  // Each window starts at its first request and resets its length later, as Yalidine documents.
  const windows = Object.fromEntries(Object.keys(WINDOWS).map((w) => [w, { left: limits[w as Window], startedAt: 0 }])) as Record<
    Window,
    { left: number; startedAt: number }
  >;
  const control = { retryAfterSeconds: null as number | null };
  const quotaHeaders = () => Object.fromEntries(Object.keys(WINDOWS).map((w) => [`x-${w}-quota-left`, String(Math.max(0, windows[w as Window].left))]));
  const paged = (items: unknown[], page: number, size: number) => ({
    has_more: page * size < items.length,
    total_data: items.length,
    data: items.slice((page - 1) * size, page * size),
  });
  const double: CarrierDouble = new CarrierDouble((req) => {
    const now = Date.now();
    for (const [w, length] of Object.entries(WINDOWS)) {
      const window = windows[w as Window];
      if (now - window.startedAt >= length) Object.assign(window, { left: limits[w as Window], startedAt: now });
    }
    if (Object.values(windows).some((window) => window.left <= 0)) {
      const retry: Record<string, string> = control.retryAfterSeconds === null ? {} : { 'retry-after': String(control.retryAfterSeconds) };
      return { status: 429, json: { error: { code: 429, message: 'Too many requests' } }, headers: { ...quotaHeaders(), ...retry } };
    }
    for (const window of Object.values(windows)) window.left -= 1;
    const answer = serve(req);
    return answer === 'lost' ? answer : { ...answer, headers: { ...quotaHeaders(), ...answer.headers } };
  }, options);
  const serve = (req: RecordedRequest): Answer => {
    const url = new URL(req.path, 'http://double');
    const pathname = url.pathname.replace(/\/+$/, '');
    const label = /^\/labels\/([\w-]+)\.pdf$/.exec(pathname);
    if (req.method === 'GET' && label) return { status: 200, bytes: labelPdf(label[1]) };
    if (double.switches.wrongCredentials || req.headers['x-api-id'] !== YALIDINE_KEYS.api_id || req.headers['x-api-token'] !== YALIDINE_KEYS.api_token)
      return { status: 401, json: { error: { code: 401, message: 'Invalid API ID or API TOKEN' } } };
    const page = Number(url.searchParams.get('page') ?? 1);
    if (req.method === 'GET' && pathname === '/wilayas') return { status: 200, json: paged(YALIDINE_WILAYAS, page, 100) };
    if (req.method === 'GET' && pathname === '/communes') return { status: 200, json: paged(YALIDINE_COMMUNES, page, 2) };
    const shown = (p: DoubleParcel) => ({
      tracking: p.tracking,
      order_id: p.reference,
      last_status: p.status,
      label: `${double.url}/labels/${p.tracking}.pdf`,
    });
    if (req.method === 'GET' && pathname === '/parcels') {
      const orderId = url.searchParams.get('order_id');
      const tracking = url.searchParams.get('tracking');
      const found = [...double.parcels.values()].filter((p) => (orderId === null || p.reference === orderId) && (tracking === null || p.tracking === tracking));
      return { status: 200, json: paged(found.map(shown), 1, 1000) };
    }
    if (req.method === 'POST' && pathname === '/parcels') {
      const answer: Record<string, unknown> = {};
      for (const parcel of Array.isArray(req.json) ? req.json : []) {
        const orderId = String(parcel.order_id);
        if (double.byReference(orderId)) answer[orderId] = { success: false, order_id: orderId, tracking: null, message: 'order_id déjà utilisé' };
        else if (!YALIDINE_COMMUNES.some((c) => c.name === parcel.to_commune_name && c.wilaya_name === parcel.to_wilaya_name))
          answer[orderId] = { success: false, order_id: orderId, tracking: null, message: 'to_commune_name est invalide' };
        else {
          const tracking = double.nextTracking('yal-');
          double.parcels.set(tracking, { tracking, reference: orderId, status: 'En préparation', sent: parcel });
          const made = shown(double.parcels.get(tracking) as DoubleParcel);
          answer[orderId] = { success: true, order_id: orderId, tracking, import_id: 1, label: made.label, labels: made.label, message: '' };
        }
      }
      if (double.switches.loseCreateAnswer) return 'lost';
      return { status: 200, json: answer };
    }
    const one = /^\/parcels\/([\w-]+)$/.exec(pathname);
    const parcel = one && double.parcels.get(one[1]);
    if (one && req.method === 'DELETE') {
      const deleted = parcel?.status === 'En préparation';
      if (parcel && deleted) double.parcels.delete(parcel.tracking);
      return { status: 200, json: [{ tracking: one[1], deleted }] };
    }
    return { status: 404, json: { error: { code: 404, message: 'Not found' } } };
  };
  return Object.assign(await double.listen(), {
    /** What is left of each window now (a test empties one to see the adapter hold back). */
    windows,
    control,
  });
}

// ----------------------------------------------------------------------------------------------
// What the adapters' tests share
// ----------------------------------------------------------------------------------------------

/** A parcel as the machinery hands it to an adapter (carriers.md 2b). */
export function aParcel(city: CarrierCity, overrides: Partial<ParcelRequest> = {}): ParcelRequest {
  return {
    reference: `#${1000 + Math.floor(Math.random() * 9000)}`,
    name: 'Salma Bennani',
    phone: '0612345678',
    address: '12 rue Ibn Battouta, apt 3',
    city,
    amount: 249.6,
    products: '2 × Babouches, 1 × Tajine',
    productLines: [
      { name: 'Babouches', quantity: 2 },
      { name: 'Tajine', quantity: 1 },
    ],
    note: 'Appeler avant 18h',
    allowOpen: true,
    pickupCity: null,
    ...overrides,
  };
}

/**
 * An account's session with a double: the guarded client allowed 127.0.0.1, with a short time-out
 * (3 s unless told) so a lost answer ends soon; not shorter, or a busy machine (the browser tier
 * beside the parallel run) answers a live request after it and the test races its own double.
 * `close()` ends the client's sockets.
 */
export function sessionWith(double: { url: string }, credentials: Record<string, string>, timeoutMs = 3000) {
  const sender = new SignedSender(true, timeoutMs);
  return Object.assign(carrierSession(sender, double.url, credentials), { close: () => sender.close() });
}

/** The one outcome of a one-parcel create. */
export async function createOne(adapter: ShippingAdapter, session: CarrierSession, parcel: ParcelRequest): Promise<CreateOutcome> {
  const outcomes = await adapter.create(session, [parcel]);
  const outcome = outcomes.get(parcel.reference);
  if (!outcome) throw new Error(`no outcome for ${parcel.reference}`);
  return outcome;
}

/** The signed body of a push, as a carrier signs it: hex HMAC-SHA256 of the raw bytes. */
export function hexSigned(body: unknown, secret: string): { raw: Buffer; signature: string } {
  const raw = Buffer.from(JSON.stringify(body));
  return { raw, signature: crypto.createHmac('sha256', secret).update(raw).digest('hex') };
}
