import type { Knex } from 'knex';

/**
 * Seeding: accounts, agents and keys go through the running service's own pages and API (as a
 * user would create them); order rows, which only need to exist, are bulk-inserted with SQL.
 */

// The service runs with production settings: its session cookie is Secure, which express-session
// only sets on a request the router marks as HTTPS.
const BEHIND_ROUTER = { 'x-forwarded-proto': 'https' };

export interface Account {
  email: string;
  cookie: string;
  userId: string;
  workspaceId: string;
}

function sessionCookie(res: Response): string {
  const cookie = res.headers.getSetCookie().find((c) => c.startsWith('ocs.sid='));
  if (!cookie) throw new Error(`no session cookie (status ${res.status})`);
  return cookie.split(';')[0];
}

async function expectStatus(res: Response, status: number, what: string): Promise<Response> {
  if (res.status !== status) throw new Error(`${what}: expected ${status}, got ${res.status}: ${(await res.text()).slice(0, 300)}`);
  return res;
}

/** Signs up through GET/POST /signup (CSRF token and all) and makes an order-handler agent. */
export async function signUp(baseUrl: string, knex: Knex, email: string, workspace: string): Promise<Account> {
  const page = await fetch(`${baseUrl}/signup`, { headers: BEHIND_ROUTER });
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await page.text())?.[1];
  if (!csrf) throw new Error('no _csrf field on /signup');
  const form = new URLSearchParams({ name: 'Bench User', email, password: 'bench-password-1', workspace, _csrf: csrf });
  const signedUp = await fetch(`${baseUrl}/signup`, {
    method: 'POST',
    redirect: 'manual',
    headers: { ...BEHIND_ROUTER, cookie: sessionCookie(page), 'content-type': 'application/x-www-form-urlencoded' },
    body: form,
  });
  await expectStatus(signedUp, 303, 'POST /signup');
  const cookie = sessionCookie(signedUp);
  await expectStatus(await api(baseUrl, cookie, 'POST', '/api/agents', { name: 'Bench handler', orderHandler: true }), 201, 'POST /api/agents');
  const row = await knex('users as u')
    .join('workspace_members as m', 'm.user_id', 'u.id')
    .whereRaw('lower(u.email) = lower(?)', [email])
    .first('u.id', 'm.workspace_id');
  return { email, cookie, userId: row.id, workspaceId: row.workspace_id };
}

export function api(baseUrl: string, cookie: string, method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${baseUrl}${path}`, {
    method,
    headers: { ...BEHIND_ROUTER, cookie, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

/** `count` API keys of the account, made with POST /api/keys. */
export async function createKeys(baseUrl: string, account: Account, count: number): Promise<string[]> {
  const keys: string[] = [];
  while (keys.length < count) {
    const batch = Array.from({ length: Math.min(8, count - keys.length) }, async () => {
      const res = await expectStatus(await api(baseUrl, account.cookie, 'POST', '/api/keys', { name: 'bench' }), 201, 'POST /api/keys');
      return ((await res.json()) as { key: string }).key;
    });
    keys.push(...(await Promise.all(batch)));
  }
  return keys;
}

/** Names as a Moroccan shop's customers have them (1,600 pairs), so that search figures are realistic. */
const FIRST_NAMES = `(ARRAY['Amina','Fatima','Khadija','Youssef','Mohamed','Omar','Salma','Hajar','Imane','Soukaina','Meryem','Zineb','Nadia','Rachid','Hamza','Ayoub','Mehdi','Karim','Samir','Hicham','Nour','Yasmine','Siham','Latifa','Hassan','Abdelali','Ilyas','Anas','Réda','Othmane','Ghita','Kenza','Loubna','Wiam','Chaïmae','Houda','Saïd','Brahim','Driss','Aïcha'])`;
const LAST_NAMES = `(ARRAY['Benali','El Idrissi','Alaoui','Bennani','Tazi','Fassi','Berrada','Chraibi','Lahlou','Ouazzani','Benjelloun','Sefrioui','Kettani','Zniber','Amrani','Naciri','El Amrani','Bouzidi','Haddad','Mansouri','Cherkaoui','Filali','Skalli','Guessous','Lamrani','Belkadi','Rami','Sbai','Hakimi','Bakkali','Mernissi','Slaoui','Squalli','Tahiri','Benkirane','Ait Taleb','Ouhammou','Bensouda','El Khatib','Zemmouri'])`;
/** Cities as shops write them (accents and all), so that a city search finds one order in twelve. */
const CITIES = `(ARRAY['Casablanca','Rabat','Marrakech','Fès','Tanger','Agadir','Meknès','Oujda','Kénitra','Tétouan','Salé','El Jadida'])`;
const STATUSES = `(ARRAY['pending','processing','calling','confirmed','unconfirmed','failed','no-answer','postponed','order-changed','unrecognized'])`;

/**
 * Orders for the given workspaces (`perWorkspace` each, spread over the last year), each with its
 * outbound operation for the workspace's order handler, as the service creates them.
 */
export async function insertOrders(knex: Knex, workspaceIds: string[], perWorkspace: number): Promise<void> {
  await knex.raw(
    `WITH inserted AS (
       INSERT INTO orders (workspace_id, client_name, phone, store_name, products_name, address, city, external_ref, status, created_at, operation_id)
       SELECT w.id, ${FIRST_NAMES}[1 + floor(random() * 40)::int] || ' ' || ${LAST_NAMES}[1 + floor(random() * 40)::int], '+21261' || lpad(floor(random() * 10000000)::int::text, 7, '0'),
              'Atlas Store', 'Argan oil 250 ml, black soap', CASE WHEN g % 3 = 0 THEN NULL ELSE g || ' Rue Mohammed V, Casablanca' END,
              ${CITIES}[1 + g % 12], '#' || (1000 + g),
              ${STATUSES}[1 + g % 10], now() - random() * interval '365 days', gen_random_uuid()
         FROM unnest(?::uuid[]) AS w(id) CROSS JOIN generate_series(1, ?) AS g
       RETURNING id, workspace_id, created_at, operation_id
     )
     INSERT INTO operations (id, workspace_id, order_id, agent_id, direction, status, next_attempt_at, created_at)
     SELECT i.operation_id, i.workspace_id, i.id, a.id, 'outbound', 'pending', i.created_at, i.created_at
       FROM inserted i JOIN agents a ON a.workspace_id = i.workspace_id AND a.is_order_handler`,
    [workspaceIds, perWorkspace],
  );
}

/** `count` other workspaces, each with an owner and an order handler, made in bulk; returns their ids. */
export async function fillerWorkspaces(knex: Knex, count: number): Promise<string[]> {
  const { rows } = await knex.raw(
    `WITH u AS (
       INSERT INTO users (email, name, password_hash)
       SELECT 'filler-' || g || '@bench.invalid', 'Filler ' || g, 'not-a-hash' FROM generate_series(1, ?) g
       RETURNING id, name
     ), w AS (
       INSERT INTO workspaces (name, owner_id) SELECT name || ' shop', id FROM u RETURNING id, owner_id
     ), m AS (
       INSERT INTO workspace_members (workspace_id, user_id, role) SELECT id, owner_id, 'owner' FROM w
     ), a AS (
       INSERT INTO agents (workspace_id, name, is_order_handler) SELECT id, 'Handler', true FROM w
     )
     SELECT id FROM w`,
    [count],
  );
  return rows.map((r: { id: string }) => r.id);
}
