import crypto from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { expect } from 'chai';
import express from 'express';
import type { Express, Request, Response } from 'express';
import type { Redis } from 'ioredis';
import pino from 'pino';
import request from 'supertest';
import { freePort } from '../../db/embedded';
import { createRedis, redisReady } from '../../db/redis';
import type { LimiterDeps, LimiterOptions } from '../../routes/middleware/rate-limit';
import { clientIp, createLimiter, createLimiterPair } from '../../routes/middleware/rate-limit';
import { requireRedis } from '../helpers/redis';
import { startThrowawayRedis } from '../helpers/redis-server';

const silent = pino({ level: 'silent' });

const FIRST = { limit: 5, windowMs: 60_000 };
const SECOND = { limit: 3, windowMs: 30_000 };
const WINDOW_SECONDS = [FIRST.windowMs / 1000, SECOND.windowMs / 1000];

type Kind = 'createLimiter twice' | 'createLimiterPair';
const KINDS: Kind[] = ['createLimiter twice', 'createLimiterPair'];

interface Names {
  first: string;
  second: string;
}
const randomNames = (): Names => {
  const r = () => crypto.randomBytes(5).toString('hex');
  return { first: `t-ip-${r()}`, second: `t-key-${r()}` };
};

const onLimited = (_req: Request, res: Response, retryAfter: number) => {
  res.status(429).json({ error: 'rate_limited', retryAfter });
};

interface Built {
  kind: Kind;
  names: Names;
  app: Express;
}

/**
 * A tiny app: GET /t behind the two limits (the first keyed by `x-f` when `headerFirstKey`, else by
 * the default client IP; the second by `x-k`), and GET /first-key answering the first limit's key
 * for this client, unlimited.
 */
function build(kind: Kind, deps: LimiterDeps, options: { headerFirstKey?: boolean; names?: Names } = {}): Built {
  const names = options.names ?? randomNames();
  const firstKey = options.headerFirstKey ? (req: Request) => req.get('x-f') ?? '' : undefined;
  const first: LimiterOptions = { name: names.first, ...FIRST, key: firstKey, onLimited };
  const second: LimiterOptions = { name: names.second, ...SECOND, key: (req) => req.get('x-k') ?? '', onLimited };
  const app = express();
  app.get('/first-key', (req, res) => {
    res.json({ key: (firstKey ?? clientIp)(req) });
  });
  if (kind === 'createLimiterPair') {
    app.get('/t', createLimiterPair(deps, first, second), (req, res) => {
      res.json({ ok: true, k: req.get('x-k') });
    });
  } else {
    app.get('/t', createLimiter(deps, first), createLimiter(deps, second), (req, res) => {
      res.json({ ok: true, k: req.get('x-k') });
    });
  }
  return { kind, names, app };
}

interface Step {
  /** The first limit's key (only with `headerFirstKey`). */
  f?: string;
  /** The second limit's key. */
  k: string;
}

const send = (app: Express, step: Step) => {
  const req = request(app).get('/t').set('x-k', step.k);
  return step.f === undefined ? req : req.set('x-f', step.f);
};

interface Seen {
  status: number;
  /** The body, `retryAfter` replaced by '#'. */
  body: unknown;
  /** RateLimit, RateLimit-Policy and Retry-After header lines in order, names and times replaced. */
  lines: string[];
  /** The `t=` of each RateLimit entry, in order (the first limit's, then the second's). */
  ts: number[];
  retryAfter?: number;
  bodyRetryAfter?: number;
}

const RATE_LIMIT_HEADERS = ['ratelimit', 'ratelimit-policy', 'retry-after'];

function observe(res: request.Response, names: Names): Seen {
  const lines: string[] = [];
  const ts: number[] = [];
  let retryAfter: number | undefined;
  // superagent's response keeps Node's IncomingMessage as `res`: its rawHeaders are the lines as sent.
  const raw = (res as unknown as { res: IncomingMessage }).res.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i].toLowerCase();
    if (!RATE_LIMIT_HEADERS.includes(name)) continue;
    let value = raw[i + 1].split(`"${names.first}"`).join('"FIRST"').split(`"${names.second}"`).join('"SECOND"');
    if (name === 'ratelimit') {
      value = value.replace(/\bt=(\d+)/g, (_m: string, t: string) => {
        ts.push(Number(t));
        return 't=#';
      });
    }
    if (name === 'retry-after') {
      expect(value).to.match(/^\d+$/);
      retryAfter = Number(value);
      value = '#';
    }
    lines.push(`${name}: ${value}`);
  }
  let body = res.body;
  let bodyRetryAfter: number | undefined;
  if (body && typeof body === 'object' && 'retryAfter' in body) {
    bodyRetryAfter = body.retryAfter;
    body = { ...body, retryAfter: '#' };
  }
  return { status: res.status, body, lines, ts, retryAfter, bodyRetryAfter };
}

/**
 * `t` (or Retry-After) of a counter, seen between two PTTLs of its key: no more than the time left
 * before the request (the whole window when the key had none), no less than the time left after.
 */
function expectBetween(value: number, pttlBefore: number, pttlAfter: number, windowSeconds: number, what: string) {
  expect(pttlAfter, `${what}: the counter has an expiry after the request`).to.be.greaterThan(0);
  const hi = pttlBefore > 0 ? Math.ceil(pttlBefore / 1000) : windowSeconds;
  // 1 ms of slack for express-rate-limit reading Node's clock where Redis reads its own.
  const lo = Math.ceil((pttlAfter - 1) / 1000);
  expect(value, `${what} (PTTL ${pttlBefore} ms before, ${pttlAfter} ms after)`).to.be.within(lo, hi);
}

/**
 * Sends `steps` to a reference app (createLimiter twice) and a pair app, alternately, on one Redis;
 * checks each answer's times against the counters' PTTLs and answers the observations of both.
 */
async function runBoth(redis: Redis, steps: Step[], options: { headerFirstKey?: boolean; seed?: (built: Built) => Promise<void> } = {}) {
  const sides = KINDS.map((kind) => build(kind, { redis, logger: silent }, options));
  const firstKeys = await Promise.all(sides.map(async (side) => (await request(side.app).get('/first-key').expect(200)).body.key as string));
  for (const side of sides) await options.seed?.(side);
  const seen: Seen[][] = sides.map(() => []);
  for (const [n, step] of steps.entries()) {
    for (const [s, side] of sides.entries()) {
      const keys = [`rl:${side.names.first}:${step.f ?? firstKeys[s]}`, `rl:${side.names.second}:${step.k}`];
      const before = await Promise.all(keys.map((key) => redis.pttl(key)));
      const res = await send(side.app, step);
      const after = await Promise.all(keys.map((key) => redis.pttl(key)));
      const o = observe(res, side.names);
      const what = `${side.kind}, step ${n + 1} (${JSON.stringify(step)})`;
      for (const [j, t] of o.ts.entries()) expectBetween(t, before[j], after[j], WINDOW_SECONDS[j], `${what}: t of entry ${j + 1}`);
      if (o.retryAfter !== undefined) {
        const j = o.ts.length - 1;
        expectBetween(o.retryAfter, before[j], after[j], WINDOW_SECONDS[j], `${what}: Retry-After`);
        expect(o.bodyRetryAfter, `${what}: onLimited's retryAfter is Retry-After`).to.equal(o.retryAfter);
      }
      seen[s].push(o);
    }
  }
  return { reference: seen[0], pair: seen[1] };
}

/** The pair's observations equal the reference's, times within 1 s of each other. */
function expectSame(reference: Seen[], pair: Seen[], steps: Step[]) {
  expect(pair.length).to.equal(reference.length);
  for (const [n, step] of steps.entries()) {
    const [a, b] = [reference[n], pair[n]];
    const what = `step ${n + 1} (${JSON.stringify(step)})`;
    expect(b.status, `${what}: status`).to.equal(a.status);
    expect(b.body, `${what}: body`).to.deep.equal(a.body);
    expect(b.lines, `${what}: rate limit headers`).to.deep.equal(a.lines);
    expect(b.ts.length, `${what}: RateLimit entries`).to.equal(a.ts.length);
    for (const [j, t] of b.ts.entries()) expect(Math.abs(t - a.ts[j]), `${what}: t of entry ${j + 1}: ${t} vs ${a.ts[j]}`).to.be.at.most(1);
    expect(b.retryAfter === undefined, `${what}: Retry-After present on both or neither`).to.equal(a.retryAfter === undefined);
    if (a.retryAfter !== undefined) {
      expect(a.retryAfter).to.be.within(1, 60);
      expect(b.retryAfter).to.be.within(1, 60);
      expect(Math.abs(b.retryAfter! - a.retryAfter), `${what}: Retry-After ${b.retryAfter} vs ${a.retryAfter}`).to.be.at.most(1);
    }
  }
}

/** Which limit refused each step: 'first', 'second' or undefined (let through). */
const refusedBy = (seen: Seen[]) =>
  seen.map((o) => (o.status === 200 ? undefined : o.lines.some((line) => line.startsWith('ratelimit: ') && line.includes('"SECOND"')) ? 'second' : 'first'));

describe('createLimiterPair', () => {
  describe('with Redis: the same answers as createLimiter twice in a row', () => {
    it('first limit by client IP: statuses, bodies, RateLimit/RateLimit-Policy/Retry-After headers', async function () {
      const redis = await requireRedis(this);
      const steps: Step[] = [
        { k: 'k1' },
        { k: 'k1' },
        { k: 'k-seeded' }, // a counter at 2 with 15 s left: the second limit's last request, t=15
        { k: 'k-seeded' }, // refused by the second limit, Retry-After 15
        { k: 'k-no-expiry' }, // a counter with no expiry starts a new window
        { k: 'k1' }, // the first limit's 6th: refused
        { k: 'k2' },
      ];
      const { reference, pair } = await runBoth(redis, steps, {
        seed: async ({ names }) => {
          await redis.set(`rl:${names.second}:k-seeded`, 2, 'PX', 15_000);
          await redis.set(`rl:${names.second}:k-no-expiry`, 99);
        },
      });
      expect(reference.map((o) => o.status)).to.deep.equal([200, 200, 200, 429, 200, 429, 429]);
      expect(refusedBy(reference)).to.deep.equal([undefined, undefined, undefined, 'second', undefined, 'first', 'first']);
      expect(reference[2].ts[1], 'the seeded counter’s time left').to.be.within(14, 15);
      expect(reference[3].retryAfter, 'Retry-After of the seeded counter').to.be.within(14, 15);
      expect(reference[4].lines.slice(0, 2)).to.deep.equal(['ratelimit: "FIRST"; r=0; t=#', 'ratelimit: "SECOND"; r=2; t=#']);
      expectSame(reference, pair, steps);
    });

    it('both limits keyed by header: the second counter is not touched by a request the first refuses', async function () {
      const redis = await requireRedis(this);
      const steps: Step[] = [
        { f: 'f1', k: 'k1' },
        { f: 'f1', k: 'k1' },
        { f: 'f1', k: 'k1' },
        { f: 'f1', k: 'k1' }, // refused by the second limit
        { f: 'f1', k: 'k2' }, // the first limit's 5th
        { f: 'f1', k: 'k2' }, // refused by the first limit: k2 stays at 1
        { f: 'f1', k: 'k2' },
        { f: 'f2', k: 'k2' }, // k2's 2nd
        { f: 'f2', k: 'k2' }, // k2's 3rd
        { f: 'f2', k: 'k2' }, // refused by the second limit
        { f: 'f2', k: 'k:with "odd" chars é' },
      ];
      const { reference, pair } = await runBoth(redis, steps, { headerFirstKey: true });
      expect(reference.map((o) => o.status)).to.deep.equal([200, 200, 200, 429, 200, 429, 429, 200, 200, 429, 200]);
      expect(refusedBy(reference)).to.deep.equal([
        undefined,
        undefined,
        undefined,
        'second',
        undefined,
        'first',
        'first',
        undefined,
        undefined,
        'second',
        undefined,
      ]);
      expectSame(reference, pair, steps);
    });
  });

  describe('the second counter in Redis', () => {
    for (const kind of KINDS) {
      it(`${kind}: +1 when the first limit lets the request through (even if the second refuses), unchanged when the first refuses`, async function () {
        const redis = await requireRedis(this);
        const { app, names } = build(kind, { redis, logger: silent }, { headerFirstKey: true });
        const count = async (name: string, key: string) => {
          const value = await redis.get(`rl:${name}:${key}`);
          return value === null ? null : Number(value);
        };
        // [first key, second key, status, second counter after]
        const steps: [string, string, number, number | null][] = [
          ['f1', 'k1', 200, 1],
          ['f1', 'k1', 200, 2],
          ['f1', 'k1', 200, 3],
          ['f1', 'k1', 429, 4], // refused by the second limit, but counted by it
          ['f1', 'k2', 200, 1], // the first limit's 5th
          ['f1', 'k2', 429, 1], // refused by the first limit
          ['f1', 'k3', 429, null], // refused by the first limit: k3 never counted
          ['f1', 'k1', 429, 4],
          ['f2', 'k2', 200, 2],
        ];
        for (const [n, [f, k, status, after]] of steps.entries()) {
          const firstBefore = (await count(names.first, f)) ?? 0;
          const res = await send(app, { f, k });
          expect(res.status, `step ${n + 1}`).to.equal(status);
          expect(await count(names.second, k), `step ${n + 1}: GET rl:<second>:${k}`).to.equal(after);
          expect(await count(names.first, f), `step ${n + 1}: GET rl:<first>:${f}`).to.equal(firstBefore + 1);
        }
        const pttl = await redis.pttl(`rl:${names.second}:k1`);
        expect(pttl).to.be.within(1, SECOND.windowMs);
      });
    }

    it('a Redis that has never seen the pair script (fresh server): counts from the first request', async function () {
      const server = await startThrowawayRedis(this);
      const client = createRedis(server.url, silent);
      try {
        expect(await redisReady(client)).to.equal(true);
        const { app, names } = build('createLimiterPair', { redis: client, logger: silent }, { headerFirstKey: true });
        for (let i = 1; i <= SECOND.limit; i++) await send(app, { f: 'f', k: 'k' }).expect(200);
        await send(app, { f: 'f', k: 'k' }).expect(429);
        expect(await client.get(`rl:${names.first}:f`)).to.equal(String(SECOND.limit + 1));
        expect(await client.get(`rl:${names.second}:k`)).to.equal(String(SECOND.limit + 1));
      } finally {
        client.disconnect();
        await server.stop();
      }
    });
  });

  describe('Redis unavailable: requests are let through (fail-open) and the failure is logged', () => {
    const tight = (name: string): LimiterOptions => ({ name, limit: 1, windowMs: 60_000, key: () => 'same', onLimited });

    const failOpen = async (redis: Redis) => {
      const logs: string[] = [];
      const logger = pino({ level: 'error' }, { write: (line: string) => logs.push(line) });
      const names = randomNames();
      const app = express();
      app.get('/t', createLimiterPair({ redis, logger }, tight(names.first), tight(names.second)), (_req, res) => {
        res.json({ ok: true });
      });
      // Two createLimiters on the same client, for the headers they send while Redis is away.
      const refNames = randomNames();
      const reference = express();
      reference.get('/t', createLimiter({ redis, logger }, tight(refNames.first)), createLimiter({ redis, logger }, tight(refNames.second)), (_req, res) => {
        res.json({ ok: true });
      });
      for (let i = 0; i < 4; i++) {
        const res = await request(app).get('/t');
        expect(res.status, `request ${i + 1}`).to.equal(200);
        expect(res.body).to.deep.equal({ ok: true });
        // Each request counts as the first of a fresh window for both limits, as createLimiter's.
        expect(res.headers.ratelimit).to.equal(`"${names.first}"; r=0; t=60, "${names.second}"; r=0; t=60`);
        const ref = await request(reference).get('/t').expect(200);
        const unnamed = (value: string, n: { first: string; second: string }) =>
          value
            .replaceAll(n.first, 'FIRST')
            .replaceAll(n.second, 'SECOND')
            .replace(/pk=:[^:]*:/g, 'pk');
        expect(unnamed(res.headers.ratelimit, names)).to.equal(unnamed(ref.headers.ratelimit, refNames));
        expect(unnamed(res.headers['ratelimit-policy'], names)).to.equal(unnamed(ref.headers['ratelimit-policy'], refNames));
        expect(res.headers['retry-after']).to.equal(undefined);
      }
      expect(
        logs.some((line) => JSON.parse(line).msg === 'rate limit store unavailable: letting requests through'),
        logs.join(''),
      ).to.equal(true);
    };

    it('a client pointed at a port where nothing listens', async () => {
      const port = await freePort();
      const redis = createRedis(`redis://127.0.0.1:${port}`, silent);
      try {
        await failOpen(redis);
      } finally {
        redis.disconnect();
      }
    });

    it('a client that was connected, then disconnected', async function () {
      await requireRedis(this); // skips without REDIS_URL
      const redis = createRedis(process.env.REDIS_URL!, silent);
      expect(await redisReady(redis)).to.equal(true);
      const ended = new Promise((resolve) => redis.once('end', resolve));
      redis.disconnect();
      await ended;
      await failOpen(redis);
    });
  });

  describe('without Redis: the two limits in memory', () => {
    it('the second limit refuses its (limit+1)th request, the first its (limit+1)th, with Retry-After', async () => {
      const { app, names } = build('createLimiterPair', { logger: silent }, { headerFirstKey: true });
      for (let i = 0; i < SECOND.limit; i++) await send(app, { f: 'f1', k: 'k1' }).expect(200);
      const bySecond = await send(app, { f: 'f1', k: 'k1' }).expect(429);
      expect(bySecond.body.error).to.equal('rate_limited');
      expect(bySecond.body.retryAfter).to.be.within(1, SECOND.windowMs / 1000);
      expect(bySecond.headers['retry-after']).to.equal(String(bySecond.body.retryAfter));
      expect(bySecond.headers.ratelimit).to.match(new RegExp(`^"${names.first}"; r=1; t=\\d+, "${names.second}"; r=0; t=\\d+$`));
      expect(bySecond.headers['ratelimit-policy']).to.match(
        new RegExp(`^"${names.first}"; q=5; w=60; pk=:[A-Za-z0-9+/=]+:, "${names.second}"; q=3; w=30; pk=:[A-Za-z0-9+/=]+:$`),
      );

      await send(app, { f: 'f1', k: 'k2' }).expect(200); // the first limit's 5th
      const byFirst = await send(app, { f: 'f1', k: 'k3' }).expect(429);
      expect(byFirst.body.retryAfter).to.be.within(1, FIRST.windowMs / 1000);
      expect(byFirst.headers['retry-after']).to.equal(String(byFirst.body.retryAfter));
      expect(byFirst.headers.ratelimit).to.match(new RegExp(`^"${names.first}"; r=0; t=\\d+$`));
      // k3 was not counted by the second limit when the first refused it: 3 more go through elsewhere.
      for (let i = 0; i < SECOND.limit; i++) await send(app, { f: 'f2', k: 'k3' }).expect(200);
      await send(app, { f: 'f2', k: 'k3' }).expect(429);
    });
  });
});
