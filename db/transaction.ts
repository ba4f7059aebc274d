import type { Knex } from 'knex';

/** How many times a transaction that lost a deadlock or a serialization conflict is run again. */
export const TRANSACTION_RETRIES = 3;

/** Postgres's answer when it breaks a deadlock (40P01) or refuses a serializable commit (40001). */
function isRetryableConflict(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === '40P01' || code === '40001';
}

/**
 * Makes `knex.transaction(work)` run `work` again, up to TRANSACTION_RETRIES more times, when
 * Postgres chose it as the victim of a deadlock or a serialization conflict: the transaction was
 * rolled back whole, so running it again is safe, and the caller never sees a 500 for a conflict
 * it did not cause. Paths keep to one lock order (see services/shared/locks.ts) so that this stays rare.
 * Only the top-level form with a function is retried: a nested transaction (a savepoint) belongs
 * to its outer one, which retries as a whole.
 */
export function retryConflicts(knex: Knex): Knex {
  const begin = knex.transaction.bind(knex) as (...args: unknown[]) => Promise<unknown>;
  const transaction = async (work: unknown, config?: unknown) => {
    if (typeof work !== 'function') return begin(work, config);
    for (let tries = 0; ; tries += 1) {
      try {
        return await begin(work, config);
      } catch (err) {
        if (tries >= TRANSACTION_RETRIES || !isRetryableConflict(err)) throw err;
      }
    }
  };
  Object.defineProperty(knex, 'transaction', { value: transaction, configurable: true });
  return knex;
}
