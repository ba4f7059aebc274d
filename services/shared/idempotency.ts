import crypto from 'node:crypto';
import type { Knex } from 'knex';
import { AppError, ConflictError } from './errors';
import { msg } from './messages';

/** A stored response is replayed for this long; after it the key may be used afresh. */
const IDEMPOTENCY_WINDOW_HOURS = 24;
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

export interface IdempotentResult<T> {
  status: number;
  body: T;
  replayed: boolean;
}

/** A stable fingerprint of a normalized request, to tell a retry from a different request. */
export function requestHash(request: unknown): string {
  return crypto.createHash('sha256').update(JSON.stringify(request)).digest('hex');
}

/**
 * Runs a create at most once per (workspace, Idempotency-Key) within the window, and replays its
 * response to retries. The key row is inserted first, in the same transaction as the work: a
 * concurrent duplicate waits on that row and then replays, and if the work fails the key goes
 * with it, so a corrected retry can succeed.
 */
export class IdempotencyService {
  constructor(private readonly knex: Knex) {}

  async once<T>(
    workspaceId: string,
    key: string,
    hash: string,
    perform: (trx: Knex.Transaction) => Promise<{ status: number; body: T }>,
  ): Promise<IdempotentResult<T>> {
    if (!KEY_PATTERN.test(key)) {
      throw new AppError(400, msg('INVALID_IDEMPOTENCY_KEY'), 'INVALID_IDEMPOTENCY_KEY');
    }
    return this.knex.transaction(async (trx) => {
      await trx('idempotency_keys')
        .where({ workspace_id: workspaceId, key })
        .where('created_at', '<', trx.raw(`now() - interval '${IDEMPOTENCY_WINDOW_HOURS} hours'`))
        .delete();
      const claimed = await trx('idempotency_keys')
        .insert({ workspace_id: workspaceId, key, request_hash: hash })
        .onConflict(['workspace_id', 'key'])
        .ignore()
        .returning('key');
      if (claimed.length === 0) return this.replay<T>(trx, workspaceId, key, hash);
      const response = await perform(trx);
      await trx('idempotency_keys')
        .where({ workspace_id: workspaceId, key })
        .update({ response_status: response.status, response_body: JSON.stringify(response.body) });
      return { ...response, replayed: false };
    });
  }

  /** Keys past the window can never be replayed: the worker's housekeeping deletes them. */
  async pruneExpired(): Promise<number> {
    return this.knex('idempotency_keys')
      .where('created_at', '<', this.knex.raw(`now() - interval '${IDEMPOTENCY_WINDOW_HOURS} hours'`))
      .delete();
  }

  private async replay<T>(trx: Knex.Transaction, workspaceId: string, key: string, hash: string): Promise<IdempotentResult<T>> {
    const stored = await trx('idempotency_keys').where({ workspace_id: workspaceId, key }).first('request_hash', 'response_status', 'response_body');
    if (!stored || stored.response_status === null) {
      throw new ConflictError(msg('IDEMPOTENCY_KEY_IN_USE'), 'IDEMPOTENCY_KEY_IN_USE');
    }
    if (stored.request_hash !== hash) {
      throw new AppError(422, msg('IDEMPOTENCY_KEY_REUSED'), 'IDEMPOTENCY_KEY_REUSED');
    }
    return { status: stored.response_status, body: stored.response_body as T, replayed: true };
  }
}
