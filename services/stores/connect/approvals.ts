/**
 * What every platform's approval shares: the single-use state of an approval under way
 * (`oauth_states`), and a connection's life from pending to active, or discarded when anything
 * fails; the worker prunes what is left over.
 */
import crypto from 'node:crypto';
import type { Knex } from 'knex';
import { audit } from '../../audit';
import { storeTarget } from '../records';
import { ConnectError } from './connector';

/** How long an approval may take, and how long a half-made connection may stay. */
export const STATE_MINUTES = 10;
const PENDING_MINUTES = 60;

export interface StateRow {
  kind: string;
  workspace_id: string;
  connection_id: string | null;
  shop: string | null;
  name: string;
  cod_only: boolean;
}

export const sha256 = (text: string) => crypto.createHash('sha256').update(text).digest('hex');

/** Takes the approval's state: once, from the session that started it, within 10 minutes. */
export async function takeState(knex: Knex, kind: string, sessionId: string, nonce: unknown): Promise<StateRow> {
  if (typeof nonce !== 'string' || nonce.length === 0 || nonce.length > 200) throw new ConnectError('state', kind);
  const [row] = await knex('oauth_states')
    .where({ nonce_hash: sha256(nonce), kind, session_hash: sha256(sessionId) })
    .where('created_at', '>', knex.raw(`now() - interval '${STATE_MINUTES} minutes'`))
    .delete(['kind', 'workspace_id', 'connection_id', 'shop', 'name', 'cod_only']);
  if (!row) throw new ConnectError('state', kind);
  return row;
}

/** The steps after the state is taken: a ConnectError then carries what the owner typed, for the form to show again. */
export async function afterState<T>(state: StateRow, steps: () => Promise<T>): Promise<T> {
  try {
    return await steps();
  } catch (err) {
    if (err instanceof ConnectError) err.typed = { name: state.name, shop: state.shop };
    throw err;
  }
}

/** The connection of an approval made before its platform's webhooks are, pending until they are; signed with the app's client secret. */
export async function pendingConnection(knex: Knex, state: StateRow, kind: string, secret: string): Promise<string> {
  const [row] = await knex('store_connections')
    .insert({
      workspace_id: state.workspace_id,
      kind,
      name: state.name,
      shop: state.shop,
      secret,
      cod_only: state.cod_only,
      enabled: false,
      pending: true,
      connected_by: 'oauth',
    })
    .returning('id');
  return row.id;
}

/** The connection works: its webhooks are made; `writeBack` holds what writing outcomes back needs (null: nothing). */
export async function activate(knex: Knex, id: string, writeBack: object | null): Promise<void> {
  await knex.transaction(async (trx) => {
    const [row] = await trx('store_connections')
      .where({ id })
      .update({ pending: false, enabled: true, write_back: writeBack ? JSON.stringify(writeBack) : null, write_back_error: null })
      .returning(['id', 'workspace_id', 'name', 'kind']);
    if (row)
      await audit.record(trx, { workspaceId: row.workspace_id, action: 'store_connected', target: storeTarget(row.id, row.name), details: { kind: row.kind } });
  });
}

/** A pending connection is deleted (a refusal, a failure): nothing of it stays. */
export async function discard(knex: Knex, id: string): Promise<void> {
  await knex('store_connections').where({ id, pending: true }).delete();
}

/** Approvals past their 10 minutes, and connections left pending over an hour. */
export async function pruneApprovals(knex: Knex): Promise<number> {
  const states = await knex('oauth_states')
    .where('created_at', '<', knex.raw(`now() - interval '${STATE_MINUTES} minutes'`))
    .delete();
  const pending = await knex('store_connections')
    .where({ pending: true })
    .where('created_at', '<', knex.raw(`now() - interval '${PENDING_MINUTES} minutes'`))
    .delete();
  return states + pending;
}
