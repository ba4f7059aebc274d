import type { Knex } from 'knex';

/**
 * Where one bind value of a captured statement comes from when the baseline replays it:
 * a named input of the request (`workspace`, `keyHash`, `body.phone`…), a column of the first row
 * an earlier statement of the same request returned (`row:1.id`), or a constant.
 */
type Arg = { ref: string } | { value: unknown };

/** Tells the baseline's Postgres backends from the service's (for the CPU figures). */
export const BASELINE_APPLICATION_NAME = 'bench-baseline';

export interface Statement {
  sql: string;
  args: Arg[];
}

interface Captured {
  uid?: string;
  sql: string;
  bindings: unknown[];
  rows?: Array<Record<string, unknown>>;
}

const TRANSACTION_CONTROL = /^(BEGIN|COMMIT|ROLLBACK)\b/i;

/**
 * Runs `work` (a real service call) on `knex` and returns the statements it awaited, in order,
 * each bind value traced back to the named `inputs` or to an earlier statement's result. The
 * baseline replays exactly these statements, so it does "the same SQL" by construction.
 * Fire-and-forget statements (answered after `work` resolved) are left out; transaction control
 * (BEGIN, COMMIT) has no answer event of its own and is always kept.
 */
export async function captureStatements(knex: Knex, inputs: Record<string, string>, work: () => Promise<unknown>): Promise<Statement[]> {
  const issued: Captured[] = [];
  const onQuery = (q: { __knexQueryUid?: string; sql: string; bindings?: unknown[] }) => {
    issued.push({ uid: q.__knexQueryUid, sql: q.sql, bindings: q.bindings ?? [] });
  };
  const onResponse = (response: unknown, q: { __knexQueryUid?: string }) => {
    const statement = issued.find((s) => s.uid !== undefined && s.uid === q.__knexQueryUid);
    if (!statement) return;
    const rows = Array.isArray(response) ? response : ((response as { rows?: unknown[] })?.rows ?? []);
    statement.rows = rows.filter((r) => r && typeof r === 'object') as Captured['rows'];
  };
  knex.on('query', onQuery);
  knex.on('query-response', onResponse);
  try {
    await work();
  } finally {
    knex.off('query', onQuery);
    knex.off('query-response', onResponse);
  }
  const awaited = issued.filter((s) => s.rows !== undefined || TRANSACTION_CONTROL.test(s.sql));
  return awaited.map((statement, index) => ({
    sql: statement.sql,
    args: statement.bindings.map((value) => trace(value, inputs, awaited.slice(0, index))),
  }));
}

function trace(value: unknown, inputs: Record<string, string>, earlier: Captured[]): Arg {
  if (typeof value !== 'string') return { value };
  const input = Object.entries(inputs).find(([, v]) => v === value);
  if (input) return { ref: input[0] };
  for (let i = earlier.length - 1; i >= 0; i--) {
    const column = Object.entries(earlier[i].rows?.[0] ?? {}).find(([, v]) => v === value);
    if (column) return { ref: `row:${i}.${column[0]}` };
  }
  return { value };
}

/** The bind values of `statement` for one request, given its inputs and the earlier results. */
export function bindArgs(statement: Statement, inputs: Record<string, unknown>, earlierRows: Array<Record<string, unknown> | undefined>): unknown[] {
  return statement.args.map((arg) => {
    if ('value' in arg) return arg.value;
    const row = /^row:(\d+)\.(.+)$/.exec(arg.ref);
    return row ? earlierRows[Number(row[1])]?.[row[2]] : inputs[arg.ref];
  });
}

/**
 * What the baseline's `POST /api/orders` does after reading the session row: the least the design
 * allows, written plainly (nothing of the service's): in one transaction, the order, its operation
 * for the workspace's order handler, and the job that dispatches it, as pg-boss's `send` would
 * write it with the queue's settings (read once at start-up). Prepared, as a bare handler would.
 */
export const BASELINE_CREATE = {
  order: `INSERT INTO orders (workspace_id, client_name, phone, store_name, products_name, address, operation_id, source)
  VALUES ($1, $2, $3, $4, $5, $6, gen_random_uuid(), 'api')
  RETURNING id, workspace_id, client_name, phone, store_name, products_name, address, status, created_at, operation_id, flags`,
  operation: `INSERT INTO operations (id, workspace_id, order_id, agent_id, direction, status, next_attempt_at)
  SELECT $1, $2, $3, a.id, 'outbound', 'pending', now() FROM agents a WHERE a.workspace_id = $2 AND a.is_order_handler LIMIT 1`,
  job: `INSERT INTO pgboss.job (name, data, singleton_key, expire_in, keep_until, retry_limit, retry_delay, retry_backoff, policy)
  VALUES ('operation-due', jsonb_build_object('operationId', $1::uuid), $1::text, $2::interval, now() + $3::interval, $4, $5, $6, $7)`,
  queue: `SELECT COALESCE(expire_seconds, 900) || ' seconds' AS expire_in, COALESCE(retention_minutes, 20160) || ' minutes' AS keep_for,
  COALESCE(retry_limit, 2) AS retry_limit, COALESCE(retry_delay, 0) AS retry_delay, COALESCE(retry_backoff, false) AS retry_backoff, policy
  FROM pgboss.queue WHERE name = 'operation-due'`,
};
