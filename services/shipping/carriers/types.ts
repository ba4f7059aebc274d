import type { IncomingHttpHeaders } from 'node:http';
import type { CarrierCity } from '../cities';

/**
 * The contract between the shipping machinery (accounts, matching, jobs, labels, hooks, polling —
 * written once) and one carrier's adapter (one file per kind, one line in `registry.ts`). An adapter
 * knows its carrier's paths, shapes, words and limits; it never touches the database, the queue or
 * the clock beyond what it is handed, so each is tested against an HTTP double alone.
 */

/** The kinds the service can call; a new carrier adds its adapter and its line to the registry. */
export type CarrierKind = 'sendit' | 'ozon_express' | 'digylog' | 'yalidine';

/** One credential a kind needs, as the account form asks for it (label and hint keys in locales). */
interface CredentialField {
  name: string;
  /** Shown back (a store name, a network id) or write-only (a key, a token). */
  secret: boolean;
}

/** An answer of the carrier as the guarded HTTP client read it. */
export interface CarrierAnswer {
  /** null: no answer at all (time-out, refused connection, reset); the reason is in `failure`. */
  status: number | null;
  headers: Record<string, string>;
  body: Buffer;
  /** The service's words for a request that got no answer ("timed out"), never the far end's address. */
  failure: string | null;
}

/** A request an adapter makes; `path` is joined to the kind's origin (its `*_API_ORIGIN` setting). */
export interface CarrierRequest {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Joined to the origin; or an absolute http(s) URL the carrier gave (a label's), followed as given. */
  path: string;
  headers?: Record<string, string>;
  /** Sent as JSON. */
  json?: unknown;
  /** Sent as multipart/form-data (Ozon Express). */
  form?: Record<string, string>;
  /** Bytes to read at most (a city list, a label PDF): the client stops and fails past it. */
  maxBytes?: number;
}

/** What an adapter is handed to talk to one account's carrier. */
export interface CarrierSession {
  /** The account's credentials, opened (never logged, never in an error). */
  credentials: Readonly<Record<string, string>>;
  /** The guarded HTTP client, bound to the kind's origin. */
  request(req: CarrierRequest): Promise<CarrierAnswer>;
  /** What the adapter keeps between calls of one account (a bearer token), in memory. */
  memo: Map<string, string>;
}

/** What a parcel carries (carriers.md 2b), built from the order by the machinery. */
export interface ParcelRequest {
  /** Our reference: the order's store reference, else its id; the carrier's own reference field. */
  reference: string;
  name: string;
  /** Ten digits, 0XXXXXXXXX. */
  phone: string;
  address: string;
  city: CarrierCity;
  /** Cash to collect, in the workspace's currency's units (MAD), rounded by the adapter as its carrier requires. */
  amount: number;
  /** `2 × Babouches, 1 × Tajine` */
  products: string;
  productLines: Array<{ name: string; quantity: number }>;
  note: string | null;
  allowOpen: boolean;
  /** The account's pickup city, where the kind needs one. */
  pickupCity: CarrierCity | null;
}

/** A parcel the carrier holds. */
export interface MadeParcel {
  tracking: string;
  /** A URL of the label, or null when the carrier gives it by another call (`label`). */
  labelUrl: string | null;
  /** The carrier's words for its state, as received. */
  carrierStatus: string | null;
}

/** The outcome of asking for one parcel. */
export type CreateOutcome =
  | { kind: 'created'; parcel: MadeParcel }
  /** The carrier refused it (bad city, phone, amount, a duplicate): its reason as received. HTTP 200 with an error in the body is this. */
  | { kind: 'refused'; reason: string }
  /** No answer, or one we cannot read (time-out, reset, 5xx): the parcel may exist — look it up before trying again. */
  | { kind: 'unanswered'; reason: string }
  /** 401/403 after a fresh login: the account stops until the owner fixes it. */
  | { kind: 'credentials_refused'; reason: string }
  /** Over the carrier's rate: not before `retryAfterMs`. */
  | { kind: 'throttled'; retryAfterMs: number };

/** What the carrier says of a parcel with our reference, asked after a lost answer. */
export type LookupOutcome =
  | { kind: 'found'; parcel: MadeParcel }
  | { kind: 'absent' }
  /** The carrier cannot say (it is not asked by our reference): a person decides. */
  | { kind: 'cannot_tell'; reason: string }
  /** The carrier did not answer the question (time-out, 5xx): asked again later. */
  | { kind: 'unanswered'; reason: string }
  /** Over the carrier's rate (a lost batch's parcels asked about one by one): asked again, not before `retryAfterMs`. */
  | { kind: 'throttled'; retryAfterMs: number };

/** A status the carrier pushed or answered, still in its words. */
export interface CarrierUpdate {
  tracking: string;
  /** The carrier's words, as received: they go to `carrier_status`. */
  words: string;
  /** When it happened, if the carrier says (ISO 8601). */
  at: string | null;
}

/** What a pushed message is, read by the adapter. */
export type PushOutcome =
  /** Signature or token wrong: 401. */
  | { kind: 'unverified' }
  /** A subscription check the carrier expects answered with a body (Yalidine's crc_token). */
  | { kind: 'challenge'; answer: string }
  /** Not news (another event type): 200, nothing written. */
  | { kind: 'ignored' }
  | { kind: 'updates'; updates: CarrierUpdate[] }
  /** Signed but not readable: 400. */
  | { kind: 'unreadable' };

/** What a carrier's words mean to us (the machinery writes it through the delivery news). */
export type CarrierMeaning =
  | 'shipped'
  | 'in_transit'
  | 'out_for_delivery'
  | 'delivered'
  | 'refused'
  | 'returned'
  | 'lost'
  /** Not delivered yet (unreachable, postponed, no answer): carrier_status only, and a follow-up. */
  | 'attempted'
  /** The parcel was cancelled at the carrier. */
  | 'cancelled';

/** Per account: at most `perSecond` requests a second and `concurrency` at once (carriers.md 3 and 6). */
export interface CarrierLimits {
  perSecond: number;
  concurrency: number;
  /** Parcels per create call (Yalidine takes 50; the others one). */
  batch: number;
}

/** One kind of carrier the service can call. */
export interface ShippingAdapter {
  kind: CarrierKind;
  /** The carrier's name as the shop knows it. */
  title: string;
  /** The setting that points the kind at its API (tests: a double on 127.0.0.1), and its production value. */
  originSetting: string;
  defaultOrigin: string;
  credentials: readonly CredentialField[];
  needsPickupCity: boolean;
  limits: CarrierLimits;
  /** How the push is verified: the carrier signs with a credential, or our URL carries a token (unsigned carriers). */
  push: 'signed' | 'url_token' | 'none';
  /** For `signed`: the credential (by name) the carrier signs its pushes with; `readPush` gets its value. */
  pushSecret?: string;
  /** Checks the credentials (a login, a city list): null when they work, else the field and the carrier's reason. */
  check(session: CarrierSession): Promise<{ field: string; reason: string } | null>;
  cities(session: CarrierSession): Promise<CarrierCity[]>;
  /** Makes the parcels (one, or up to `limits.batch`), each answered by its reference. */
  create(session: CarrierSession, parcels: readonly ParcelRequest[]): Promise<Map<string, CreateOutcome>>;
  /** Asks whether a parcel with our reference exists, where the carrier can tell. */
  lookup?(session: CarrierSession, reference: string, tracking: string | null): Promise<LookupOutcome>;
  /** Cancels a parcel where the carrier allows it: false when it no longer can (already picked up). */
  cancel?(session: CarrierSession, tracking: string): Promise<{ cancelled: boolean; reason: string | null }>;
  /** The label PDF of a parcel (its URL followed, or the carrier's label call); null when the carrier gives none. */
  label?(session: CarrierSession, parcel: { tracking: string; labelUrl: string | null }): Promise<Buffer | null>;
  /** The parcel's status now, for kinds without push (polled). */
  status?(session: CarrierSession, tracking: string): Promise<CarrierUpdate | null>;
  /** Reads a pushed message; `secret` is the credential or token the kind verifies with. */
  readPush?(raw: Buffer, headers: IncomingHttpHeaders, query: Record<string, string>, secret: string): PushOutcome;
  /** What the carrier's words mean; undefined when the adapter does not know them (carrier_status only, counted). */
  meaning(words: string): CarrierMeaning | undefined;
  /** The carrier's public tracking page for a parcel, where there is one. */
  trackingUrl?(tracking: string): string | null;
}
