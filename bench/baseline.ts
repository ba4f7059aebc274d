import crypto from 'node:crypto';
import http from 'node:http';
import express from 'express';
import type { Request } from 'express';
import { Redis } from 'ioredis';
import jwt from 'jsonwebtoken';
import pg from 'pg';
import type { Statement } from './sql';
import { BARE_CREATE, BARE_TABLES, BASELINE_APPLICATION_NAME, BASELINE_CREATE, bindArgs } from './sql';

/**
 * The bare baseline the bench compares the service with: plain Express on the same Postgres and
 * Redis, replaying for each scenario the statements the service's own calls issued (captured by
 * the bench, see sql.ts), and for a new order the least work the design allows (BASELINE_CREATE).
 * No validation, no logging, no helmet, no Knex. Session routes read the
 * session's row (the one query a session costs; the cookie's signature is not checked, its id is
 * taken as it is), and the workspace comes in an `x-bench-workspace` header. The Data API checks
 * the publishable key and verifies the token, and reads the token's user and workspace by the
 * service's own statement only when the request says `x-bench-context`. A new order goes into
 * trigger-free copies of the tables when the request says `x-bench-bare`.
 */
export interface BaselinePlan {
  list: Statement[];
  /** The Data API's lookup of the token's user and workspace (the token path's session read). */
  context: Statement[];
  keyLookup: Statement[];
  jwt: { secret: string; issuer: string; projectUrl: string; publishableKey: string };
  rateLimit: { windowMs: number; prefix: string };
}

/** rate-limit-redis's increment script, sent by EVALSHA exactly as the service's limiters send it. */
const INCREMENT_SCRIPT = `local windowMs = tonumber(ARGV[1])
local timeToExpire = redis.call("PTTL", KEYS[1])
if timeToExpire <= 0 then
redis.call("SET", KEYS[1], 1, "PX", windowMs)
return { 1, windowMs }
end
local totalHits = redis.call("INCR", KEYS[1])
return { totalHits, timeToExpire }`;

type Row = Record<string, unknown>;

async function run(db: pg.Pool | pg.PoolClient, statements: Statement[], inputs: Record<string, unknown>): Promise<Row[][]> {
  const results: Row[][] = [];
  for (const statement of statements) {
    const { rows } = await db.query(
      statement.sql,
      bindArgs(
        statement,
        inputs,
        results.map((r) => r[0]),
      ),
    );
    results.push(rows);
  }
  return results;
}

const lastRows = (results: Row[][]) => results.at(-1) ?? [];
/** The session id inside `ocs.sid=s%3A<id>.<signature>`, unchecked. */
const sessionId = (req: Request) => /ocs\.sid=s%3A([^.;]+)\./.exec(req.get('cookie') ?? '')?.[1] ?? '';
/** connect-pg-simple's read, as the service's session store sends it. */
const SESSION_READ = 'SELECT sess FROM "session" WHERE sid = $1 AND expire >= to_timestamp($2)';
const bearer = (req: Request) => /^Bearer ([^\s]+)$/.exec(req.get('authorization') ?? '')?.[1];

async function main(): Promise<void> {
  const plan = JSON.parse(process.env.BENCH_PLAN ?? '') as BaselinePlan;
  const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10, application_name: BASELINE_APPLICATION_NAME });
  pool.on('error', () => {});
  const redis = new Redis(process.env.REDIS_URL!);
  const incrementSha = (await redis.script('LOAD', INCREMENT_SCRIPT)) as string;

  const app = express();
  // The cheapest way to sign and verify with jsonwebtoken: a key object made once.
  const jwtKey = crypto.createSecretKey(Buffer.from(plan.jwt.secret, 'utf8'));
  const workspace = (req: Request) => req.get('x-bench-workspace');

  const readSession = async (req: Request) => {
    const { rows } = await pool.query(SESSION_READ, [sessionId(req), Date.now() / 1000]);
    if (rows.length === 0) throw new Error('baseline: no session row for the cookie');
  };

  app.get('/api/orders', async (req, res) => {
    await readSession(req);
    res.json({ orders: lastRows(await run(pool, plan.list, { workspace: workspace(req) })) });
  });
  app.get('/data/v1/orders', async (req, res) => {
    if (req.get('apikey') !== plan.jwt.publishableKey) {
      res.status(401).json({ error: 'invalid_apikey' });
      return;
    }
    const claims = jwt.verify(bearer(req) ?? '', jwtKey, { algorithms: ['HS256'], issuer: plan.jwt.issuer }) as jwt.JwtPayload;
    // With `x-bench-context`, the token's user and workspace are read first, as the service must.
    if (req.get('x-bench-context') && lastRows(await run(pool, plan.context, { user: claims.sub })).length === 0) {
      throw new Error('baseline: no user for the token');
    }
    res.json({ orders: lastRows(await run(pool, plan.list, { workspace: workspace(req) })) });
  });
  const {
    rows: [queue],
  } = await pool.query(BASELINE_CREATE.queue);
  // The trigger-free copies of the three tables (scenario c0 writes there: `x-bench-bare`).
  for (const sql of BARE_TABLES.create) await pool.query(sql);
  const {
    rows: [job],
  } = await pool.query(BARE_TABLES.jobPartition);
  await pool.query(BARE_TABLES.jobs(job.partition));
  app.post('/api/orders', express.json(), async (req, res) => {
    await readSession(req);
    const body = req.body as Record<string, string>;
    const sql = req.get('x-bench-bare') ? BARE_CREATE : BASELINE_CREATE;
    const prefix = req.get('x-bench-bare') ? 'bare-' : '';
    const client = await pool.connect();
    let order: Row;
    try {
      await client.query('BEGIN');
      [order] = (
        await client.query({
          name: `${prefix}order`,
          text: sql.order,
          values: [workspace(req), body.clientName, body.phone, body.storeName, body.productsName, body.address ?? null],
        })
      ).rows;
      await client.query({ name: `${prefix}operation`, text: sql.operation, values: [order.operation_id, order.workspace_id, order.id] });
      await client.query({
        name: `${prefix}job`,
        text: sql.job,
        values: [order.operation_id, queue.expire_in, queue.keep_for, queue.retry_limit, queue.retry_delay, queue.retry_backoff, queue.policy],
      });
      await client.query('COMMIT');
      client.release();
    } catch (err) {
      client.release(true); // inside a failed transaction: do not reuse it
      throw err;
    }
    res.status(201).json(order);
  });
  app.post('/api/v1/token', async (req, res) => {
    const key = bearer(req) ?? '';
    const keyHash = crypto.createHash('sha256').update(key).digest('hex');
    // The two limits' counts (per IP, per key) in one Redis round trip, as the service makes them.
    await redis
      .pipeline()
      .evalsha(incrementSha, 1, `${plan.rateLimit.prefix}ip:${req.socket.remoteAddress}`, String(plan.rateLimit.windowMs))
      .evalsha(incrementSha, 1, `${plan.rateLimit.prefix}key:${keyHash}`, String(plan.rateLimit.windowMs))
      .exec();
    const [owner] = lastRows(await run(pool, plan.keyLookup, { keyHash }));
    if (!owner) {
      res.status(401).json({ error: 'invalid_api_key' });
      return;
    }
    const accessToken = jwt.sign({}, jwtKey, {
      algorithm: 'HS256',
      subject: owner.user_id as string,
      issuer: plan.jwt.issuer,
      expiresIn: 3600,
    });
    res.json({
      access_token: accessToken,
      token_type: 'bearer',
      expires_in: 3600,
      project_url: plan.jwt.projectUrl,
      publishable_key: plan.jwt.publishableKey,
    });
  });

  const server = http.createServer(app);
  server.listen(0, '127.0.0.1', () => {
    const { port } = server.address() as { port: number };
    console.log(JSON.stringify({ url: `http://127.0.0.1:${port}` }));
  });
  process.on('SIGTERM', () => {
    server.close();
    server.closeIdleConnections();
    void Promise.allSettled([pool.end(), redis.quit()]).then(() => process.exit(0));
  });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
