import crypto from 'node:crypto';
import type { Knex } from 'knex';
import { z } from 'zod';
import type { Jobs } from '../../db/jobs';
import { QUEUES } from '../../db/jobs';
import type { SignedSender } from '../../integrations/http';
import type { Secrets } from '../../integrations/secrets';
import { audit } from '../audit';
import { ConflictError, NotFoundError, ValidationError, isUuid, msg, optionalText, ownerOnly, parse, requiredText } from '../../services/shared';
import type { FieldErrors, WorkspaceActor } from '../../services/shared';
import { cityKey, matchCity } from './cities';
import type { CarrierCity } from './cities';
import { SHIPPING_ADAPTERS, shippingAdapter } from './carriers/registry';
import { carrierSession } from './carriers/session';
import type { CarrierSession, ShippingAdapter } from './carriers/types';

/** A carrier account as every member reads it: never its credentials, nor its push URL's token. */
export interface CarrierAccount {
  id: string;
  kind: string;
  title: string;
  name: string;
  pickup_city_id: string | null;
  allow_open: boolean;
  auto_ship: boolean;
  stores: string[];
  state: 'working' | 'credentials_refused' | 'unreachable';
  state_since: string | null;
  state_reason: string | null;
  cities: number;
  cities_refreshed_at: string | null;
  unknown_words: Record<string, number>;
  created_at: string;
  /** Where the carrier pushes its news (the owner pastes it in the carrier's portal); only the owner reads it. */
  push_url?: string | null;
}

/** An account as the machinery uses it: its credentials opened, its adapter found. */
export interface OpenAccount {
  id: string;
  workspace_id: string;
  name: string;
  adapter: ShippingAdapter;
  credentials: Record<string, string>;
  hook_token: string;
  pickup_city_id: string | null;
  allow_open: boolean;
  auto_ship: boolean;
  store_names: string[];
  state: CarrierAccount['state'];
}

interface AccountRow {
  id: string;
  workspace_id: string;
  kind: string;
  name: string;
  credentials: string;
  hook_token: string;
  pickup_city_id: string | null;
  allow_open: boolean;
  auto_ship: boolean;
  store_names: string[];
  state: CarrierAccount['state'];
  state_since: Date | null;
  state_reason: string | null;
  unknown_words: Record<string, number>;
  cities_refreshed_at: Date | null;
  created_at: Date;
}

const KINDS = Object.keys(SHIPPING_ADAPTERS) as [string, ...string[]];
/** A credential is a key, a token or an id: one line, at most 500 characters. */
const CREDENTIAL_MAX = 500;

const optionsSchema = z.object({
  name: requiredText('Name', 100),
  pickup_city_id: optionalText('Pickup city', 100),
  allow_open: z.boolean({ error: msg('trueOrFalse', { label: 'allow_open' }) }).optional(),
  auto_ship: z.boolean({ error: msg('trueOrFalse', { label: 'auto_ship' }) }).optional(),
  stores: z.array(requiredText('Store', 100)).max(100).optional(),
});
const createSchema = optionsSchema.extend({
  kind: z.enum(KINDS, { error: msg('oneOf', { label: 'kind', allowed: KINDS.join(', ') }) }),
  credentials: z.record(z.string(), z.unknown(), { error: msg('required', { label: 'credentials' }) }),
});

/** The kind's credentials out of a body: each one it names, a string of one line; anything else refused by name. */
function credentialsOf(adapter: ShippingAdapter, given: Record<string, unknown>): Record<string, string> {
  const fields: FieldErrors = {};
  const credentials: Record<string, string> = {};
  for (const field of adapter.credentials) {
    const value = given[field.name];
    const text = typeof value === 'string' ? value.trim() : typeof value === 'number' ? String(value) : '';
    if (!text) fields[`credentials.${field.name}`] = msg('required', { label: field.name });
    else if (text.length > CREDENTIAL_MAX || [...text].some((c) => c.charCodeAt(0) < 0x20))
      fields[`credentials.${field.name}`] = msg('tooLong', { label: field.name, max: CREDENTIAL_MAX });
    else credentials[field.name] = text;
  }
  for (const name of Object.keys(given))
    if (!adapter.credentials.some((field) => field.name === name)) fields[`credentials.${name}`] = msg('carrierCredentialUnknown', { field: name });
  if (Object.keys(fields).length > 0) throw new ValidationError(fields);
  return credentials;
}

/**
 * Carrier accounts (docs/carriers.md): every member reads them; the owner alone creates, changes
 * and removes them. A new account's credentials are checked at the carrier first (wrong ones: 400
 * naming the field, with the carrier's reason) and its city list fetched; the credentials are
 * sealed at rest and never leave this class but to the adapter.
 */
export class CarrierAccountService {
  constructor(
    private readonly knex: Knex,
    private readonly sender: SignedSender,
    /** Each kind's API origin (its `*_API_ORIGIN` setting, or the carrier's own). */
    private readonly origins: Readonly<Record<string, string>>,
    private readonly secrets: Secrets,
    private readonly publicBaseUrl: string,
    private readonly jobs: Jobs,
  ) {}

  /**
   * What each account's adapter keeps between calls in this process (a bearer token, a carrier's
   * quota hold, the bodies of creates whose answer was lost): one memo per account.
   */
  private readonly memos = new Map<string, Map<string, string>>();

  /** A session with the account's carrier, for the adapter; `accountId` keeps its memo across calls. */
  session(adapter: ShippingAdapter, credentials: Record<string, string>, accountId?: string): CarrierSession {
    let memo = new Map<string, string>();
    if (accountId) {
      memo = this.memos.get(accountId) ?? memo;
      this.memos.set(accountId, memo);
    }
    return carrierSession(this.sender, this.origins[adapter.kind] ?? adapter.defaultOrigin, credentials, memo);
  }

  private toJson(row: AccountRow & { cities?: string | number }): CarrierAccount {
    const adapter = shippingAdapter(row.kind);
    return {
      id: row.id,
      kind: row.kind,
      title: adapter?.title ?? row.kind,
      name: row.name,
      pickup_city_id: row.pickup_city_id,
      allow_open: row.allow_open,
      auto_ship: row.auto_ship,
      stores: row.store_names,
      state: row.state,
      state_since: row.state_since && new Date(row.state_since).toISOString(),
      state_reason: row.state_reason,
      cities: Number(row.cities ?? 0),
      cities_refreshed_at: row.cities_refreshed_at && new Date(row.cities_refreshed_at).toISOString(),
      unknown_words: row.unknown_words,
      created_at: new Date(row.created_at).toISOString(),
    };
  }

  private listed(workspaceId: string) {
    return this.knex('carrier_accounts as a')
      .where('a.workspace_id', workspaceId)
      .select('a.*', this.knex.raw('(SELECT count(*) FROM carrier_cities c WHERE c.account_id = a.id) AS cities'));
  }

  async list(workspaceId: string): Promise<CarrierAccount[]> {
    const rows: AccountRow[] = await this.listed(workspaceId).orderBy(['a.created_at', 'a.id']);
    return rows.map((row) => this.toJson(row));
  }

  async get(workspaceId: string, id: string): Promise<CarrierAccount> {
    const row = isUuid(id) ? await this.listed(workspaceId).where('a.id', id).first() : undefined;
    if (!row) throw new NotFoundError(msg('carrierAccountNotFound'));
    return this.toJson(row);
  }

  /**
   * The account as its owner reads it: with the URL its carrier pushes to (the token in it for a
   * carrier that does not sign; none for a carrier without push).
   */
  async forOwner(workspace: WorkspaceActor & { id: string }, id: string): Promise<CarrierAccount> {
    const account = await this.get(workspace.id, id);
    if (workspace.role !== 'owner') return account;
    const opened = await this.open(workspace.id, id);
    const push = opened?.adapter.push ?? 'none';
    const base = `${this.publicBaseUrl}/hooks/carrier-accounts/${id}`;
    return { ...account, push_url: push === 'none' ? null : push === 'url_token' ? `${base}/${opened!.hook_token}` : base };
  }

  /** The account with its credentials opened, for the machinery; null when another workspace's or gone. */
  async open(workspaceId: string | null, id: string): Promise<OpenAccount | null> {
    if (!isUuid(id)) return null;
    const query = this.knex('carrier_accounts').where({ id });
    if (workspaceId) query.where({ workspace_id: workspaceId });
    const row: AccountRow | undefined = await query.first();
    const adapter = row && shippingAdapter(row.kind);
    if (!row || !adapter) return null;
    const opened = this.secrets.openFields(row, ['credentials', 'hook_token']);
    return {
      id: row.id,
      workspace_id: row.workspace_id,
      name: row.name,
      adapter,
      credentials: JSON.parse(opened.credentials),
      hook_token: opened.hook_token,
      pickup_city_id: row.pickup_city_id,
      allow_open: row.allow_open,
      auto_ship: row.auto_ship,
      store_names: row.store_names,
      state: row.state,
    };
  }

  /** Checks the credentials at the carrier; a refusal names the field (the first credential when the carrier does not say). */
  private async checked(adapter: ShippingAdapter, credentials: Record<string, string>): Promise<CarrierCity[]> {
    const session = this.session(adapter, credentials);
    const refused = await adapter.check(session);
    if (refused) {
      const field = adapter.credentials.some((c) => c.name === refused.field) ? refused.field : adapter.credentials[0].name;
      throw new ValidationError({ [`credentials.${field}`]: msg('carrierRefusedCredentials', { reason: refused.reason.slice(0, 300) }) });
    }
    try {
      return await adapter.cities(session);
    } catch (err) {
      // Its keys work but its city list does not come: not saved, and said where the keys are.
      const reason = err instanceof Error ? err.message.slice(0, 300) : 'no answer';
      throw new ValidationError({ [`credentials.${adapter.credentials[0].name}`]: msg('carrierCitiesUnreadable', { reason }) });
    }
  }

  async create(workspace: WorkspaceActor & { id: string }, body: unknown): Promise<CarrierAccount> {
    ownerOnly(workspace);
    const input = parse(createSchema, body ?? {});
    const adapter = shippingAdapter(input.kind)!;
    const credentials = credentialsOf(adapter, input.credentials);
    const cities = await this.checked(adapter, credentials);
    if (adapter.needsPickupCity && !input.pickup_city_id) throw new ValidationError({ pickup_city_id: msg('required', { label: 'Pickup city' }) });
    const pickup = input.pickup_city_id ? pickupCity(input.pickup_city_id, cities) : null;
    const id = await this.knex.transaction(async (trx) => {
      const [row] = await trx('carrier_accounts')
        .insert({
          workspace_id: workspace.id,
          kind: adapter.kind,
          name: input.name,
          credentials: this.secrets.seal(JSON.stringify(credentials)),
          hook_token: this.secrets.seal(crypto.randomBytes(32).toString('base64url')),
          pickup_city_id: pickup,
          allow_open: input.allow_open ?? true,
          auto_ship: input.auto_ship ?? false,
          store_names: input.stores ?? [],
        })
        .returning(['id', 'name']);
      await replaceCities(trx, row.id, cities);
      await audit.record(trx, {
        workspaceId: workspace.id,
        action: 'carrier_account_created',
        target: { type: 'carrier', id: row.id, label: row.name },
        details: { kind: adapter.kind },
      });
      return row.id as string;
    });
    return this.forOwner(workspace, id);
  }

  /** Changes the options; new credentials are checked at the carrier first and put the account back to work. */
  async update(workspace: WorkspaceActor & { id: string }, id: string, body: unknown): Promise<CarrierAccount> {
    ownerOnly(workspace);
    const account = await this.open(workspace.id, id);
    if (!account) throw new NotFoundError(msg('carrierAccountNotFound'));
    const raw = (body && typeof body === 'object' ? body : {}) as Record<string, unknown>;
    const input = parse(optionsSchema.partial(), raw);
    const given = raw.credentials;
    const credentials = given && typeof given === 'object' ? credentialsOf(account.adapter, given as Record<string, unknown>) : null;
    const cities = credentials ? await this.checked(account.adapter, credentials) : null;
    await this.knex.transaction(async (trx) => {
      const change: Record<string, unknown> = { updated_at: trx.fn.now() };
      if (input.name !== undefined) change.name = input.name;
      if (input.pickup_city_id !== undefined)
        change.pickup_city_id = input.pickup_city_id ? pickupCity(input.pickup_city_id, cities ?? (await this.cities(id))) : null;
      if (input.allow_open !== undefined) change.allow_open = input.allow_open;
      if (input.auto_ship !== undefined) change.auto_ship = input.auto_ship;
      if (input.stores !== undefined) change.store_names = input.stores;
      if (credentials)
        Object.assign(change, { credentials: this.secrets.seal(JSON.stringify(credentials)), state: 'working', state_since: null, state_reason: null });
      await trx('carrier_accounts').where({ id, workspace_id: workspace.id }).update(change);
      if (cities) await replaceCities(trx, id, cities);
      // The parcels that waited for working credentials go now.
      if (credentials) {
        const waiting: string[] = await trx('parcels').where({ account_id: id, state: 'queued' }).pluck('id');
        await this.jobs.sendMany(
          trx,
          QUEUES.shipParcel.name,
          waiting.map((parcelId) => ({ data: { parcelId } })),
        );
      }
      await audit.record(trx, {
        workspaceId: workspace.id,
        action: 'carrier_account_changed',
        target: { type: 'carrier', id, label: (input.name as string | undefined) ?? account.name },
        details: { reconnected: !!credentials },
      });
    });
    return this.forOwner(workspace, id);
  }

  async remove(workspace: WorkspaceActor & { id: string }, id: string): Promise<void> {
    ownerOnly(workspace);
    if (!isUuid(id)) throw new NotFoundError(msg('carrierAccountNotFound'));
    await this.knex.transaction(async (trx) => {
      // Parcels being sent (or waiting for a person's decision) keep their account: nothing in flight is lost.
      const busy = await trx('parcels as p')
        .join('carrier_accounts as a', 'a.id', 'p.account_id')
        .where({ 'a.id': id, 'a.workspace_id': workspace.id })
        .whereIn('p.state', ['queued', 'sending', 'uncertain'])
        .first('p.id');
      if (busy) throw new ConflictError(msg('carrierAccountBusy'), 'carrier_account_busy');
      const [row] = await trx('carrier_accounts').where({ id, workspace_id: workspace.id }).delete(['id', 'kind', 'name']);
      if (!row) throw new NotFoundError(msg('carrierAccountNotFound'));
      await audit.record(trx, {
        workspaceId: workspace.id,
        action: 'carrier_account_deleted',
        target: { type: 'carrier', id: row.id, label: row.name },
        details: { kind: row.kind },
      });
    });
  }

  /**
   * Waits for the account's next slot at its carrier's rate, reserved in the database so that every
   * process (the worker's parcels and polling, the web's labels) keeps one pace per account.
   */
  async pace(account: { id: string; adapter: ShippingAdapter }): Promise<void> {
    const { rows } = await this.knex.raw<{ rows: Array<{ wait_ms: string }> }>(takeSlot('true'), slotBindings(account));
    const wait = Number(rows[0]?.wait_ms ?? 0);
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  }

  /** The account's copy of its carrier's cities, by name. */
  async cities(accountId: string): Promise<CarrierCity[]> {
    const rows = await this.knex('carrier_cities').where({ account_id: accountId }).orderBy('name').select('city_id', 'name', 'arabic_name');
    return rows.map((row) => ({ id: row.city_id, name: row.name, arabicName: row.arabic_name }));
  }

  /** The shop's remembered choices of the account: a written city's key → the carrier's city id. */
  async choices(accountId: string): Promise<Map<string, string>> {
    const rows = await this.knex('carrier_city_choices').where({ account_id: accountId }).select('written_key', 'city_id');
    return new Map(rows.map((row) => [row.written_key, row.city_id]));
  }

  /** Remembers a person's choice for a written city, so the next order written the same way goes through alone. */
  async remember(db: Knex | Knex.Transaction, accountId: string, written: string, cityId: string): Promise<void> {
    const key = cityKey(written);
    if (!key) return;
    await db('carrier_city_choices')
      .insert({ account_id: accountId, written_key: key.slice(0, 200), city_id: cityId })
      .onConflict(['account_id', 'written_key'])
      .merge(['city_id', 'chosen_at']);
  }

  /** The worker's pass: the city lists of accounts refreshed more than a day ago (a few at a time). Returns how many were. */
  async refreshDueCities(): Promise<number> {
    const due = await this.knex('carrier_accounts')
      .whereNot({ state: 'credentials_refused' })
      .where((q) => q.whereNull('cities_refreshed_at').orWhere('cities_refreshed_at', '<', this.knex.raw("now() - interval '1 day'")))
      .orderBy('cities_refreshed_at', 'asc')
      .limit(5)
      .pluck('id');
    let refreshed = 0;
    for (const id of due) if ((await this.refreshCities(id)) !== null) refreshed += 1;
    return refreshed;
  }

  /** The worker's daily refresh of one account's city list; an account whose carrier refuses or does not answer keeps its old list. */
  async refreshCities(accountId: string): Promise<number | null> {
    const account = await this.open(null, accountId);
    if (!account || account.state === 'credentials_refused') return null;
    let cities: CarrierCity[];
    try {
      cities = await account.adapter.cities(this.session(account.adapter, account.credentials, accountId));
    } catch {
      return null;
    }
    if (cities.length === 0) return null;
    await this.knex.transaction((trx) => replaceCities(trx, accountId, cities));
    return cities.length;
  }
}

/**
 * The pickup city as the shop gives it: the carrier's city id, or the city as written (`Fès`),
 * matched without a guess like an order's; anything else is refused, naming it.
 */
function pickupCity(given: string, cities: CarrierCity[]): string {
  if (cities.some((city) => city.id === given)) return given;
  const match = matchCity(given, cities);
  if (match.matched) return match.city.id;
  throw new ValidationError({ pickup_city_id: msg('carrierCityUnknown', { city: given }) });
}

/** The account's city list replaced by the carrier's, in one transaction. */
async function replaceCities(trx: Knex.Transaction, accountId: string, cities: CarrierCity[]): Promise<void> {
  await trx('carrier_cities').where({ account_id: accountId }).delete();
  const rows = [...new Map(cities.map((city) => [city.id, city])).values()].map((city) => ({
    account_id: accountId,
    city_id: city.id.slice(0, 100),
    name: city.name.slice(0, 200) || city.id,
    arabic_name: city.arabicName ? city.arabicName.slice(0, 200) : null,
  }));
  for (let i = 0; i < rows.length; i += 1000) await trx('carrier_cities').insert(rows.slice(i, i + 1000));
  await trx('carrier_accounts').where({ id: accountId }).update({ cities_refreshed_at: trx.fn.now() });
}

/**
 * The statement that reserves an account's next call slot (`pace`, and the parcels' claim, which
 * takes a slot in the same statement when it takes parcels): `next_call_at` moves on by the gap its
 * carrier's rate leaves between calls, and `wait_ms` says how long until the slot taken. Its
 * bindings: `slotBindings`, then whatever `condition` binds.
 */
export function takeSlot(condition: string): string {
  return `UPDATE carrier_accounts a SET next_call_at = greatest(a.next_call_at, clock_timestamp()) + ? * interval '1 millisecond'
         FROM (SELECT id, greatest(next_call_at, clock_timestamp()) AS slot FROM carrier_accounts WHERE id = ? FOR UPDATE) s
        WHERE a.id = s.id AND ${condition}
        RETURNING greatest(0, extract(epoch FROM s.slot - clock_timestamp()) * 1000) AS wait_ms`;
}

/** `takeSlot`'s own bindings: the gap between calls at the carrier's rate (ms), and the account. */
export function slotBindings(account: { id: string; adapter: ShippingAdapter }): [number, string] {
  return [Math.ceil(1000 / account.adapter.limits.perSecond), account.id];
}
