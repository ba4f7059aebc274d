import crypto from 'node:crypto';
import http from 'node:http';
import express from 'express';
import type { Request, Response } from 'express';
import { Redis } from 'ioredis';
import jwt from 'jsonwebtoken';
import pg from 'pg';
import { BARE_CREATE, BARE_TABLES, BASELINE_APPLICATION_NAME, BASELINE_CREATE, BASELINE_READS } from './sql';

/**
 * The bare baseline the bench compares the service with: an independent app on the same Postgres
 * and Redis, plain Express and pg, doing the least work each route allows and answering what the
 * service answers (the bench compares the two answers before it measures: the same orders, field
 * for field, in the same JSON). None of the service's code or statements: its own statements
 * (BASELINE_READS, BASELINE_CREATE in sql.ts), each prepared once per connection, as a bare handler
 * would write them. No validation, no logging, no helmet, no Knex.
 *
 * - A session route checks the cookie's signature and reads the session's row: the workspace is the
 *   one the session's cached context names (the service's fast path reads the same row).
 * - The Data API checks the publishable key and verifies the token, then reads the orders in one
 *   statement that also checks the token's user is still a member of the token's workspace (what
 *   the product promises every request: a removed member's token reads nothing at once).
 * - The token exchange counts both limits (per IP, per key) in one Redis round trip, reads the key
 *   by its SHA-256 and signs a token with a key object made once.
 * - A new order: three prepared INSERTs in one transaction (into copies of the tables without
 *   triggers or foreign keys when the request says `x-bench-bare`).
 */
export interface BaselinePlan {
  jwt: { secret: string; issuer: string; projectUrl: string; publishableKey: string };
  sessionSecret: string;
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

/** An amount's decimals in its currency (MAD when it names none), as money is written. */
const decimals = new Map<string, number>();
function amount(value: unknown, currency: unknown): string | null {
  if (value === null) return null;
  const code = typeof currency === 'string' ? currency : 'MAD';
  let places = decimals.get(code);
  if (places === undefined) {
    places = new Intl.NumberFormat('en', { style: 'currency', currency: code }).resolvedOptions().maximumFractionDigits ?? 2;
    decimals.set(code, places);
  }
  return Number(value).toFixed(places);
}

/** The rows are the orders as the API writes them (bench/sql.ts) but for the amount, written here in its currency's decimals. */
function sendOrders(res: Response, rows: Row[]): void {
  for (const row of rows) row.total_amount = amount(row.total_amount, row.currency);
  res.type('application/json').send(JSON.stringify({ orders: rows }));
}
const bearer = (req: Request) => /^Bearer ([^\s]+)$/.exec(req.get('authorization') ?? '')?.[1];

async function main(): Promise<void> {
  const plan = JSON.parse(process.env.BENCH_PLAN ?? '') as BaselinePlan;
  const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10, application_name: BASELINE_APPLICATION_NAME });
  pool.on('error', () => {});
  const redis = new Redis(process.env.REDIS_URL!);
  const incrementSha = (await redis.script('LOAD', INCREMENT_SCRIPT)) as string;
  const query = async (name: keyof typeof BASELINE_READS, values: unknown[]) => (await pool.query({ name, text: BASELINE_READS[name], values })).rows as Row[];

  const app = express();
  // The cheapest way to sign and verify with jsonwebtoken: a key object made once.
  const jwtKey = crypto.createSecretKey(Buffer.from(plan.jwt.secret, 'utf8'));

  /** The session's workspace: the cookie `ocs.sid=s:<id>.<signature>` checked (HMAC-SHA256, as express-session signs it), its row read. */
  const sessionWorkspace = async (req: Request): Promise<string> => {
    const cookie = /(?:^|;\s*)ocs\.sid=s%3A([^.;]+)\.([^;]+)/.exec(req.get('cookie') ?? '');
    if (!cookie) throw new Error('baseline: no session cookie');
    const signature = crypto.createHmac('sha256', plan.sessionSecret).update(cookie[1]).digest('base64').replace(/=+$/, '');
    const given = Buffer.from(decodeURIComponent(cookie[2]));
    if (given.length !== signature.length || !crypto.timingSafeEqual(given, Buffer.from(signature))) throw new Error('baseline: a bad signature');
    const [row] = await query('session', [cookie[1]]);
    const workspace = (row?.sess as { ctx?: { workspace?: { id?: string } } } | undefined)?.ctx?.workspace?.id;
    if (!workspace) throw new Error('baseline: no signed-in session for the cookie');
    return workspace;
  };

  app.get('/api/orders', async (req, res) => {
    sendOrders(res, await query('list', [await sessionWorkspace(req)]));
  });
  app.get('/data/v1/orders', async (req, res) => {
    if (req.get('apikey') !== plan.jwt.publishableKey) {
      res.status(401).json({ error: 'invalid_apikey' });
      return;
    }
    const claims = jwt.verify(bearer(req) ?? '', jwtKey, { algorithms: ['HS256'], issuer: plan.jwt.issuer }) as jwt.JwtPayload;
    sendOrders(res, await query('memberList', [claims.workspace_id, claims.sub]));
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
    const workspace = await sessionWorkspace(req);
    const body = req.body as Record<string, string>;
    const sql = req.get('x-bench-bare') ? BARE_CREATE : BASELINE_CREATE;
    const prefix = req.get('x-bench-bare') ? 'bare-' : '';
    const client = await pool.connect();
    let created: Row;
    try {
      await client.query('BEGIN');
      [created] = (
        await client.query({
          name: `${prefix}order`,
          text: sql.order,
          values: [workspace, body.clientName, body.phone, body.storeName, body.productsName, body.address ?? null],
        })
      ).rows;
      await client.query({ name: `${prefix}operation`, text: sql.operation, values: [created.operation_id, created.workspace_id, created.id] });
      await client.query({
        name: `${prefix}job`,
        text: sql.job,
        values: [created.operation_id, queue.expire_in, queue.keep_for, queue.retry_limit, queue.retry_delay, queue.retry_backoff, queue.policy],
      });
      await client.query('COMMIT');
      client.release();
    } catch (err) {
      client.release(true); // inside a failed transaction: do not reuse it
      throw err;
    }
    res.status(201).json(created);
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
    const [owner] = await query('key', [keyHash]);
    if (!owner) {
      res.status(401).json({ error: 'invalid_api_key' });
      return;
    }
    const accessToken = jwt.sign({ workspace_id: owner.workspace_id }, jwtKey, {
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
