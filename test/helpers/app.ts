import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';
import type { Redis } from 'ioredis';
import type { Knex } from 'knex';
import pino from 'pino';
import request from 'supertest';
import { createApp } from '../../app';
import { loadConfig } from '../../config';
import { TEST_SECRETS_KEY, testKnex, testSessionPool } from './db';

export const silentLogger = pino({ level: 'silent' });

export const TEST_ENV = {
  NODE_ENV: 'test',
  BCRYPT_COST: '4',
  LOG_LEVEL: 'silent',
  SESSION_SECRET: 'test-session-secret-test-session-secret',
  JWT_SECRET: 'test-jwt-secret-test-jwt-secret-test-jwt',
  // 32 bytes in base64: the key third-party secrets are sealed with in the tests' database.
  SECRETS_KEY: TEST_SECRETS_KEY,
  PUBLIC_BASE_URL: 'http://127.0.0.1:3000',
  // The suite signs up thousands of users and posts reports from one address; the tests of these
  // limits set them low on an app of their own.
  SIGNUP_LIMIT_PER_IP: '1000000',
  HOOKS_LIMIT_PER_IP: '1000000',
};

/** A real app on the test database; `env` overrides configuration (e.g. lower rate limits). */
export function testApp(env: Record<string, string> = {}, redis?: Redis): Express {
  const config = loadConfig({ ...TEST_ENV, ...env });
  return createApp({ config, knex: testKnex(), sessionPool: testSessionPool(), logger: silentLogger, redis });
}

let shared: Express | undefined;
/** One app for tests that need no special configuration. */
export function app(): Express {
  shared ??= testApp();
  return shared;
}

const listeningAt = new WeakMap<Express, string>();
/**
 * An app listening once per process, as supertest's target: given the app itself, supertest starts
 * and stops a server for every request, which cost the suite more than the requests. It listens as
 * supertest does (every address, the port bound at once) and is reached at 127.0.0.1.
 */
export function listening(target: Express): string {
  let url = listeningAt.get(target);
  if (!url) {
    const server = http.createServer(target);
    server.listen(0);
    server.unref();
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    listeningAt.set(target, url);
  }
  return url;
}

/** The shared app (`app()`), listening. */
export function appUrl(): string {
  return listening(app());
}

export function uniqueEmail(label = 'user'): string {
  return `${label}-${crypto.randomUUID()}@example.test`;
}

/** The hidden `_csrf` value of the first form on a page. */
export function csrfFrom(html: string): string {
  const match = /name="_csrf" value="([^"]+)"/.exec(html);
  if (!match) throw new Error('no _csrf field on the page');
  return match[1];
}

export interface SignedIn {
  agent: ReturnType<typeof request.agent>;
  /** The session cookie, as a `Cookie` header value. */
  cookie: string;
  email: string;
  password: string;
  userId: string;
  workspaceId: string | null;
}

/** The owner invites an address (POST /api/workspace/invitations); the join link's path. */
export async function invitationPath(owner: SignedIn, email: string): Promise<string> {
  const res = await owner.agent.post('/api/workspace/invitations').send({ email }).expect(201);
  return new URL(res.body.join_url).pathname;
}

/**
 * Signs a new user up through the real form and returns a cookie-carrying agent.
 * `workspace: null` makes a user with no workspace. `invitedBy`: the owner invites the address and
 * the user signs up through the join link, becoming a member. `target` is an app or a server URL,
 * and `knex` the database behind it when that is not the test database.
 */
export async function signUp(
  options: { workspace?: string | null; email?: string; name?: string; invitedBy?: SignedIn; target?: Express | string; knex?: Knex } = {},
): Promise<SignedIn> {
  const target = options.target ?? appUrl();
  const agent = request.agent(typeof target === 'string' ? target : listening(target));
  const email = options.email ?? uniqueEmail();
  const password = 'correct horse battery';
  const path = options.invitedBy ? await invitationPath(options.invitedBy, email) : '/signup';
  const page = await agent.get(path).expect(200);
  const workspace = options.workspace === undefined && !options.invitedBy ? `Shop ${crypto.randomUUID().slice(0, 8)}` : options.workspace;
  const signedUp = await agent
    .post(path)
    .type('form')
    .send({ _csrf: csrfFrom(page.text), name: options.name ?? 'Test User', email, password, workspace: workspace ?? '' })
    .expect(303);
  const row = await (options.knex ?? testKnex())('users as u')
    .leftJoin('workspace_members as m', 'm.user_id', 'u.id')
    .whereRaw('lower(u.email) = lower(?)', [email])
    .first('u.id', 'm.workspace_id');
  const cookie = ([] as string[])
    .concat(signedUp.headers['set-cookie'] ?? [])
    .find((c) => c.startsWith('ocs.sid='))!
    .split(';')[0];
  return { agent, cookie, email, password, userId: row.id, workspaceId: row.workspace_id ?? null };
}

/** The CSRF token of a signed-in agent, read from a page that has a form. */
export async function csrfOf(agent: SignedIn['agent'], page = '/workspace'): Promise<string> {
  const res = await agent.get(page).expect(200);
  return csrfFrom(res.text);
}

/**
 * A new workspace starts with its team's human agent as order handler; this unsets it, for the
 * tests of a workspace without one (the contract's 422 NO_ORDER_HANDLER).
 */
export async function unsetOrderHandler(shop: SignedIn): Promise<void> {
  const { body } = await shop.agent.get('/api/agents').expect(200);
  for (const agent of body.agents as Array<{ id: string; is_order_handler: boolean }>) {
    if (agent.is_order_handler) await shop.agent.put(`/api/agents/${agent.id}`).send({ orderHandler: false }).expect(200);
  }
}

/**
 * A member of `owner`'s workspace. The membership row is written here (how one joins is the
 * invitations' tests' matter); then the member signs in, so the session reads it.
 */
export async function memberOf<T extends SignedIn>(owner: T): Promise<T> {
  const member = await signUp({ workspace: null });
  await testKnex()('workspace_members').insert({ workspace_id: owner.workspaceId, user_id: member.userId, role: 'member' });
  // The session caches the user's context: a new sign-in reads the membership.
  const agent = request.agent(appUrl());
  const page = await agent.get('/login').expect(200);
  await agent
    .post('/login')
    .type('form')
    .send({ _csrf: csrfFrom(page.text), email: member.email, password: member.password })
    .expect(303);
  return { ...owner, ...member, agent, workspaceId: owner.workspaceId };
}
