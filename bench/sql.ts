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

/**
 * The second baseline for `POST /api/orders` (scenario c0, issue 39): the same three INSERTs into
 * copies of orders, operations and the dispatch queue's job partition that carry the columns,
 * defaults, generated columns, checks and indexes but no trigger and no foreign key (the database's
 * per-order rules are what this baseline leaves out). Made by the baseline at start-up.
 */
export const BARE_TABLES = {
  create: [
    'DROP TABLE IF EXISTS bench_orders, bench_operations, bench_jobs',
    'CREATE TABLE bench_orders (LIKE orders INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING INDEXES INCLUDING GENERATED)',
    'CREATE TABLE bench_operations (LIKE operations INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING INDEXES INCLUDING GENERATED)',
  ],
  /** pg-boss keeps a queue's jobs in a partition of pgboss.job: the copy is of that partition. */
  jobPartition: `SELECT c.oid::regclass::text AS partition FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
  WHERE i.inhparent = 'pgboss.job'::regclass AND pg_get_expr(c.relpartbound, c.oid) LIKE '%''operation-due''%'`,
  jobs: (partition: string) => `CREATE TABLE bench_jobs (LIKE ${partition} INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING INDEXES INCLUDING GENERATED)`,
};

/** BASELINE_CREATE's statements, the same but into the trigger-free copies. */
export const BARE_CREATE = {
  order: into(BASELINE_CREATE.order, 'orders', 'bench_orders'),
  operation: into(BASELINE_CREATE.operation, 'operations', 'bench_operations'),
  job: into(BASELINE_CREATE.job, 'pgboss.job', 'bench_jobs'),
};

function into(sql: string, table: string, copy: string): string {
  const insert = `INSERT INTO ${table} (`;
  if (!sql.startsWith(insert)) throw new Error(`bench: ${table} is not what the statement inserts into`);
  return `INSERT INTO ${copy} (${sql.slice(insert.length)}`;
}
