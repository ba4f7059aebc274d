/** Tells the baseline's Postgres backends from the service's (for the CPU figures). */
export const BASELINE_APPLICATION_NAME = 'bench-baseline';

/**
 * An order's columns as the API writes them, in its order: times as ISO text to the millisecond in UTC, as a JSON
 * date is, the delivery as one object; only the amount is left to write in its currency's decimals. (The
 * text takes the column's name, so the statements order by the table's column, `o.created_at`, not by the text.)
 */
const iso = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
const ORDER_COLUMNS = `id, workspace_id, client_name, phone, store_name, products_name, address, city, note, status,
  ${iso('created_at')} AS created_at, ${iso('placed_at')} AS placed_at, operation_id, flags, source, store_connection_id,
  external_id, external_ref, total_amount, currency,
  CASE WHEN delivery_status IS NOT NULL AND delivery_at IS NOT NULL THEN json_build_object('status', delivery_status,
    'carrier', delivery_carrier, 'tracking_number', delivery_tracking_number, 'carrier_status', delivery_carrier_status,
    'updated_at', ${iso('delivery_at')}) END AS delivery,
  assigned_to, ${iso('assigned_at')} AS assigned_at, rescheduled_for`;

/**
 * The baseline's reads, its own (nothing of the service's), each prepared by name: the session's
 * row; a workspace's orders newest first; the same only while the token's user is a member of the
 * workspace (one statement for the Data API's check and list); an API key by its hash.
 */
export const BASELINE_READS = {
  session: 'SELECT sess FROM session WHERE sid = $1 AND expire >= now()',
  list: `SELECT ${ORDER_COLUMNS} FROM orders o WHERE workspace_id = $1 ORDER BY o.created_at DESC, o.id DESC`,
  memberList: `SELECT ${ORDER_COLUMNS} FROM orders o
  WHERE workspace_id = $1 AND EXISTS (SELECT 1 FROM workspace_members m WHERE m.workspace_id = $1 AND m.user_id = $2)
  ORDER BY o.created_at DESC, o.id DESC`,
  key: 'SELECT user_id, workspace_id FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())',
};

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
