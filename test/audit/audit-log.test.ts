import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { decodeHTML } from 'entities';
import request from 'supertest';
import { loadConfig, ROOT } from '../../config';
import { Jobs } from '../../db/jobs';
import { createServices } from '../../services';
import { AUDIT_ACTIONS, AUDIT_PAGE_SIZE } from '../../services/audit';
import type { SignedIn } from '../helpers/app';
import { appUrl, csrfFrom, csrfOf, signUp, TEST_ENV, uniqueEmail } from '../helpers/app';
import { testKnex } from '../helpers/db';
import { ACCESS_TOKEN, APP_SECRET, PHONE_NUMBER_ID } from '../helpers/whatsapp';

/**
 * The audit log (issue 58, item 4): exports, member changes, key, credential and connection changes,
 * settings and sign-ins from a new device are recorded once, with who, what and from where, in the
 * transaction of the change; the owner reads them at /workspace/audit and GET /api/workspace/audit,
 * 50 a page; never a secret; kept one year.
 */

const UA = 'AuditTest/1.0 (Linux; Android 14)';
const AGENT_URL = 'http://127.0.0.1:9/calls';
const HOOK_URL = 'http://127.0.0.1:9/hooks';
const services = () => createServices(testKnex(), loadConfig(TEST_ENV), new Jobs(testKnex()));

interface Row {
  id: string;
  action: string;
  actor_id: string | null;
  target_type: string | null;
  target_id: string | null;
  target_label: string | null;
  details: Record<string, unknown>;
  ip: string | null;
  user_agent: string | null;
}

const eventsOf = (workspaceId: string | null): Promise<Row[]> =>
  testKnex()('audit_events')
    .where({ workspace_id: workspaceId })
    .orderBy([{ column: 'created_at' }, { column: 'id' }]);

/** The one event of `action` in the workspace (failing if there are none or several). */
async function theEvent(workspaceId: string | null, action: string): Promise<Row> {
  const rows = (await eventsOf(workspaceId)).filter((r) => r.action === action);
  expect(rows, action).to.have.length(1);
  return rows[0];
}

/** The request as a browser sends it: our user agent on every call. */
const as = (s: SignedIn) => ({
  get: (path: string) => s.agent.get(path).set('User-Agent', UA),
  post: (path: string) => s.agent.post(path).set('User-Agent', UA),
  put: (path: string) => s.agent.put(path).set('User-Agent', UA),
  delete: (path: string) => s.agent.delete(path).set('User-Agent', UA),
});

/** Signs in through the form with `agent` (its cookies kept); the answer to the post. */
async function signInWith(agent: ReturnType<typeof request.agent>, who: SignedIn) {
  const page = await agent.get('/login').expect(200);
  return agent
    .post('/login')
    .set('User-Agent', UA)
    .type('form')
    .send({ _csrf: csrfFrom(page.text), email: who.email, password: who.password })
    .expect(303);
}

/** Signs out (the device cookie stays). */
async function signOut(agent: ReturnType<typeof request.agent>) {
  await agent
    .post('/logout')
    .type('form')
    .send({ _csrf: await csrfOf(agent) })
    .expect(303);
}

/** A browser whose device cookie is `device`. */
function withDevice(device: string) {
  const agent = request.agent(appUrl());
  agent.jar.setCookie(`ocs.device=${device}; Path=/`, '127.0.0.1', '/');
  return agent;
}

/** A member of `owner`'s workspace, joined through an invitation link. */
const memberOf = (owner: SignedIn) => signUp({ invitedBy: owner, name: 'Karim Member' });

const pageText = (html: string) => decodeHTML(html.replace(/<[^>]+>/g, ' ')).replace(/\s+/g, ' ');

describe('the audit log (issue 58, item 4)', () => {
  it('each action through the real routes is recorded once, with its actor, address, browser and target', async () => {
    const owner = await signUp({ name: 'Amina Owner' });
    const ws = owner.workspaceId!;
    const o = as(owner);

    // Orders CSV export (the page's Export link is this route).
    await o.get('/api/orders/export.csv?status=pending').expect(200);
    const exported = await theEvent(ws, 'orders_exported');
    expect(exported).to.include({ actor_id: owner.userId, target_type: 'orders', user_agent: UA });
    expect(exported.ip).to.equal('127.0.0.1'); // an IPv4 client as people write it, not ::ffff:127.0.0.1
    expect(exported.details).to.deep.include({ statuses: ['pending'] });

    // API keys.
    const key = (await o.post('/api/keys').send({ name: 'Sheets' }).expect(201)).body;
    expect(await theEvent(ws, 'api_key_created')).to.include({
      actor_id: owner.userId,
      target_type: 'api_key',
      target_id: key.id,
      target_label: `Sheets (${key.prefix})`,
    });
    await o.delete(`/api/keys/${key.id}`).expect(204);
    await o.delete(`/api/keys/${key.id}`).expect(204); // again: harmless, and not recorded twice
    expect(await theEvent(ws, 'api_key_revoked')).to.include({ actor_id: owner.userId, target_id: key.id });

    // Invitations and members: invited, joined (the joiner acts), removed; another invited, withdrawn; a member leaves.
    const member = await memberOf(owner);
    const [invitedEvent] = (await eventsOf(ws)).filter((r) => r.action === 'member_invited');
    expect(invitedEvent).to.include({ actor_id: owner.userId, target_type: 'invitation', target_label: member.email });
    expect(await theEvent(ws, 'member_joined')).to.include({
      actor_id: member.userId,
      target_type: 'member',
      target_id: member.userId,
      target_label: member.email,
    });
    const invited = (
      await o
        .post('/api/workspace/invitations')
        .send({ email: uniqueEmail('later') })
        .expect(201)
    ).body;
    expect((await eventsOf(ws)).filter((r) => r.action === 'member_invited')).to.have.length(2);
    await o.delete(`/api/workspace/invitations/${invited.id}`).expect(204);
    expect(await theEvent(ws, 'invitation_revoked')).to.include({ actor_id: owner.userId, target_id: invited.id, target_label: invited.email });
    await o.delete(`/api/workspace/members/${member.userId}`).expect(204);
    expect(await theEvent(ws, 'member_removed')).to.include({ actor_id: owner.userId, target_id: member.userId, target_label: member.email });
    const leaver = await signUp({ invitedBy: owner });
    await as(leaver).delete(`/api/workspace/members/${leaver.userId}`).expect(204);
    expect(await theEvent(ws, 'member_left')).to.include({ actor_id: leaver.userId, target_id: leaver.userId, user_agent: UA });

    // A voice agent: created, edited, its secret rotated (the page's button).
    const voice = (await o.post('/api/agents').send({ name: 'Robot', kind: 'voice', endpointUrl: AGENT_URL }).expect(201)).body;
    expect(await theEvent(ws, 'agent_created')).to.include({ actor_id: owner.userId, target_type: 'agent', target_id: voice.id, target_label: 'Robot' });
    await o.put(`/api/agents/${voice.id}`).send({ name: 'Robot 2' }).expect(200);
    const edited = await theEvent(ws, 'agent_edited');
    expect(edited).to.include({ target_id: voice.id, target_label: 'Robot 2' });
    expect(edited.details).to.deep.equal({ kind: 'voice', changed: ['name'] });
    const csrf = await csrfOf(owner.agent, `/agents/${voice.id}`);
    await o.post(`/agents/${voice.id}/rotate-secret`).type('form').send({ _csrf: csrf }).expect(200);
    expect(await theEvent(ws, 'agent_secret_rotated')).to.include({ actor_id: owner.userId, target_id: voice.id });
    // A human agent holds no credential: not audited.
    await o.post('/api/agents').send({ name: 'Salma' }).expect(201);
    expect((await eventsOf(ws)).filter((r) => r.action === 'agent_created')).to.have.length(1);

    // Webhook endpoints: created, edited, secret rotated, deleted.
    const hook = (
      await o
        .post('/api/webhooks')
        .send({ url: `${HOOK_URL}?token=abc`, description: 'Sheet' })
        .expect(201)
    ).body;
    expect(await theEvent(ws, 'webhook_created')).to.include({ target_type: 'webhook', target_id: hook.id, target_label: HOOK_URL });
    await o.put(`/api/webhooks/${hook.id}`).send({ description: 'Sheet 2', enabled: false }).expect(200);
    expect((await theEvent(ws, 'webhook_edited')).details).to.deep.equal({ changed: ['description', 'enabled'] });
    await o.post(`/api/webhooks/${hook.id}/rotate-secret`).expect(200);
    expect(await theEvent(ws, 'webhook_secret_rotated')).to.include({ target_id: hook.id, actor_id: owner.userId });
    await o.delete(`/api/webhooks/${hook.id}`).expect(204);
    expect(await theEvent(ws, 'webhook_deleted')).to.include({ target_id: hook.id });

    // Store connections: created, edited, deleted.
    const store = (
      await o.post('/api/stores').send({ kind: 'shopify', name: 'Atlas', shop: 'atlas.myshopify.com', secret: 'shpss_0123456789abcdef' }).expect(201)
    ).body;
    expect(await theEvent(ws, 'store_created')).to.include({ target_type: 'store', target_id: store.id, target_label: 'Atlas' });
    await o.put(`/api/stores/${store.id}`).send({ name: 'Atlas 2', secret: 'a-new-secret-by-hand' }).expect(200);
    const storeEdit = await theEvent(ws, 'store_edited');
    expect(storeEdit).to.include({ target_label: 'Atlas 2' });
    expect(storeEdit.details).to.deep.equal({ changed: ['name', 'secret'] });
    expect(JSON.stringify(await eventsOf(ws)))
      .not.to.contain('shpss_0123456789abcdef')
      .and.not.to.contain('a-new-secret-by-hand');
    await o.delete(`/api/stores/${store.id}`).expect(204);
    expect(await theEvent(ws, 'store_deleted')).to.include({ target_id: store.id, target_label: 'Atlas 2' });

    // Carrier connections: created, deleted.
    const carrier = (await o.post('/api/carriers').send({ kind: 'custom', name: 'Ozon Express' }).expect(201)).body;
    expect(await theEvent(ws, 'carrier_created')).to.include({ target_type: 'carrier', target_id: carrier.id, target_label: 'Ozon Express' });
    await o.delete(`/api/carriers/${carrier.id}`).expect(204);
    expect(await theEvent(ws, 'carrier_deleted')).to.include({ target_id: carrier.id });

    // The call settings: a change is recorded, the same values again are not.
    await o.put('/api/settings/calls').send({ maxAttempts: 5 }).expect(200);
    await o.put('/api/settings/calls').send({ maxAttempts: 5 }).expect(200);
    expect((await theEvent(ws, 'settings_changed')).details).to.deep.include({ changed: ['max_attempts'], max_attempts: 5 });

    // Every event came from this machine's address; each action once (none recorded twice).
    const rows = await eventsOf(ws);
    for (const row of rows) expect(row.ip, row.action).to.match(/127\.0\.0\.1/);
    expect(rows.filter((r) => r.action === 'member_invited')).to.have.length(3);
    expect(rows).to.have.length(24);
  });

  it('a WhatsApp agent: created, its details edited, its credentials changed — the credentials never recorded', async () => {
    const owner = await signUp();
    const ws = owner.workspaceId!;
    const human = (await owner.agent.get('/api/agents').expect(200)).body.agents[0];
    const body = {
      name: 'WhatsApp Atlas',
      kind: 'whatsapp',
      fallbackAgentId: human.id,
      phoneNumberId: PHONE_NUMBER_ID,
      accessToken: ACCESS_TOKEN,
      appSecret: APP_SECRET,
      templateName: 'order_confirmation',
      templateLanguage: 'fr',
    };
    const agent = (await owner.agent.post('/api/agents').send(body).expect(201)).body;
    expect((await theEvent(ws, 'agent_created')).details).to.deep.equal({ kind: 'whatsapp' });
    await owner.agent.put(`/api/agents/${agent.id}`).send({ templateLanguage: 'ar' }).expect(200);
    expect((await theEvent(ws, 'agent_edited')).details).to.deep.equal({ kind: 'whatsapp', changed: ['template_language'] });
    const newToken = `EAAG${'y'.repeat(40)}`;
    const newSecret = 'f'.repeat(32);
    await owner.agent.put(`/api/agents/${agent.id}`).send({ accessToken: newToken, appSecret: newSecret }).expect(200);
    expect((await theEvent(ws, 'agent_secret_rotated')).details).to.deep.equal({ kind: 'whatsapp', changed: ['access_token', 'app_secret'] });
    const stored = JSON.stringify(await eventsOf(ws));
    for (const secret of [ACCESS_TOKEN, APP_SECRET, newToken, newSecret]) expect(stored).not.to.contain(secret);
  });

  it('a refused or rolled-back change records nothing', async () => {
    const owner = await signUp();
    const ws = owner.workspaceId!;
    const member = await memberOf(owner);
    const before = (await eventsOf(ws)).length;
    // A member's attempts at what is the owner's: refused, nothing recorded.
    await member.agent.post('/api/webhooks').send({ url: HOOK_URL }).expect(403);
    await member.agent.post('/api/agents').send({ name: 'Robot', kind: 'voice', endpointUrl: AGENT_URL }).expect(403);
    await member.agent.post('/api/carriers').send({ kind: 'custom', name: 'X' }).expect(403);
    await member.agent.delete(`/api/workspace/members/${owner.userId}`).expect(403);
    await member.agent.post('/api/workspace/invitations').send({ email: uniqueEmail() }).expect(403);
    // The owner's own refusals: the owner cannot be removed; a bad invitation; an unknown key.
    await owner.agent.delete(`/api/workspace/members/${owner.userId}`).expect(409);
    await owner.agent.post('/api/workspace/invitations').send({ email: 'not an address' }).expect(400);
    await owner.agent.delete('/api/keys/00000000-0000-4000-8000-000000000000').expect(404);
    expect(await eventsOf(ws)).to.have.length(before);

    // A change made in a transaction that then rolls back leaves no event either.
    const error = await testKnex()
      .transaction(async (trx) => {
        await services().apiKeys.create({ userId: owner.userId, workspaceId: ws }, { name: 'Doomed' }, trx);
        expect((await trx('audit_events').where({ workspace_id: ws, action: 'api_key_created' })).length).to.equal(1);
        throw new Error('rolled back');
      })
      .catch((err: Error) => err);
    expect(error.message).to.equal('rolled back');
    expect(await eventsOf(ws)).to.have.length(before);
    expect(await testKnex()('api_keys').where({ workspace_id: ws, name: 'Doomed' })).to.deep.equal([]);
  });

  it('only the owner reads the log: a member gets the 403 page and a 403 JSON; another workspace’s events never show', async () => {
    const owner = await signUp();
    const member = await memberOf(owner);
    const stranger = await signUp();
    await stranger.agent.post('/api/keys').send({ name: 'Stranger key' }).expect(201);
    await owner.agent.post('/api/keys').send({ name: 'Owner key' }).expect(201);

    const page = await member.agent.get('/workspace/audit').expect(403);
    expect(page.headers['content-type']).to.match(/text\/html/);
    expect(page.text).not.to.contain('Owner key');
    expect((await member.agent.get('/api/workspace/audit').expect(403)).body).to.deep.equal({ error: 'Forbidden' });
    await request(appUrl()).get('/api/workspace/audit').expect(401);

    const own = (await owner.agent.get('/api/workspace/audit').expect(200)).body;
    expect(own.events.map((e: { action: string }) => e.action)).to.include('api_key_created');
    expect(JSON.stringify(own)).to.contain('Owner key').and.not.to.contain('Stranger key');
    const html = (await owner.agent.get('/workspace/audit').expect(200)).text;
    expect(html).to.contain('Owner key').and.not.to.contain('Stranger key');
    // The workspace page links to it, for the owner only.
    expect((await owner.agent.get('/workspace').expect(200)).text).to.contain('href="/workspace/audit"');
    expect((await member.agent.get('/workspace').expect(200)).text).not.to.contain('href="/workspace/audit"');
  });

  it('never a secret: keys, agents’ and endpoints’ secrets, rotated or not, are in neither the page, the API nor the table', async () => {
    const owner = await signUp();
    const ws = owner.workspaceId!;
    const secrets: string[] = [];
    secrets.push((await owner.agent.post('/api/keys').send({ name: 'Sheets' }).expect(201)).body.key);
    const voice = (await owner.agent.post('/api/agents').send({ name: 'Robot', kind: 'voice', endpointUrl: AGENT_URL }).expect(201)).body;
    secrets.push(voice.secret);
    secrets.push((await owner.agent.post(`/api/agents/${voice.id}/rotate-secret`).expect(200)).body.secret);
    const hook = (await owner.agent.post('/api/webhooks').send({ url: HOOK_URL }).expect(201)).body;
    secrets.push(hook.secret);
    secrets.push((await owner.agent.post(`/api/webhooks/${hook.id}/rotate-secret`).expect(200)).body.secret);
    secrets.push((await owner.agent.post('/api/stores').send({ kind: 'custom', name: 'Sheet' }).expect(201)).body.secret);
    secrets.push((await owner.agent.post('/api/carriers').send({ kind: 'custom', name: 'Ozon' }).expect(201)).body.secret);
    const invitation = (await owner.agent.post('/api/workspace/invitations').send({ email: uniqueEmail() }).expect(201)).body;
    secrets.push(new URL(invitation.join_url).pathname.split('/').pop()!);
    expect(secrets.every((s) => typeof s === 'string' && s.length >= 20)).to.equal(true);

    const shown = [
      (await owner.agent.get('/workspace/audit').expect(200)).text,
      JSON.stringify((await owner.agent.get('/api/workspace/audit').expect(200)).body),
      JSON.stringify((await testKnex().raw('SELECT a.*::text AS row FROM audit_events a WHERE workspace_id = ?', [ws])).rows),
    ];
    expect((await eventsOf(ws)).length).to.be.at.least(8);
    for (const text of shown) for (const secret of secrets) expect(text).not.to.contain(secret);
  });

  it('pages of 50, newest first: the older and newer links go through every event once, on the page and by the API', async () => {
    const owner = await signUp();
    const ws = owner.workspaceId!;
    // 123 events, some sharing one instant (the id breaks the tie), written as they would be.
    await testKnex().raw(
      `INSERT INTO audit_events (workspace_id, actor_id, action, target_type, target_label, ip, created_at)
       SELECT ?, ?, 'api_key_created', 'api_key', 'key ' || n, '203.0.113.' || n, now() - make_interval(secs => n / 3)
         FROM generate_series(1, 123) n`,
      [ws, owner.userId],
    );
    const all = (await testKnex()('audit_events')
      .where({ workspace_id: ws })
      .orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])) as Row[];
    expect(all).to.have.length(123);

    // The API: older all the way, then newer all the way back.
    const seen: string[] = [];
    let page = (await owner.agent.get('/api/workspace/audit').expect(200)).body;
    expect(page.newer).to.equal(null);
    const pages = [page];
    while (page.older) {
      page = (await owner.agent.get(`/api/workspace/audit?older=${page.older}`).expect(200)).body;
      pages.push(page);
    }
    for (const p of pages) seen.push(...p.events.map((e: { id: string }) => e.id));
    expect(pages.map((p) => p.events.length)).to.deep.equal([AUDIT_PAGE_SIZE, AUDIT_PAGE_SIZE, 23]);
    expect(seen).to.deep.equal(all.map((r) => r.id));
    const back: string[][] = [];
    while (page.newer) {
      page = (await owner.agent.get(`/api/workspace/audit?newer=${page.newer}`).expect(200)).body;
      back.unshift(page.events.map((e: { id: string }) => e.id));
    }
    expect(back.flat()).to.deep.equal(all.slice(0, 100).map((r) => r.id));
    expect(page.newer).to.equal(null);

    // The page: the same through its links, addresses shown.
    const shown: string[] = [];
    let html = (await owner.agent.get('/workspace/audit').expect(200)).text;
    for (;;) {
      shown.push(...[...html.matchAll(/<bdi>(203\.0\.113\.\d+)<\/bdi>/g)].map((m) => m[1]));
      const older = /href="(\/workspace\/audit\?older=[^"]+)" rel="next"/.exec(html)?.[1];
      if (!older) break;
      html = (await owner.agent.get(decodeHTML(older)).expect(200)).text;
      expect(html).to.match(/href="\/workspace\/audit\?newer=[^"]+" rel="prev"/);
    }
    expect(shown).to.deep.equal(all.map((r) => r.ip));

    // A position that is not one: 400 by the API, the newest page on the page.
    const bad = await owner.agent.get('/api/workspace/audit?older=bm90LWEtcG9zaXRpb24').expect(400);
    expect(bad.body.fields).to.have.all.keys('older');
    expect((await owner.agent.get('/workspace/audit?older=nonsense').expect(200)).text).to.contain('203.0.113.1<');
  });

  it('sign-in from a new device: recorded once; the same device again is not; the cookie is HttpOnly, SameSite=Lax, and only its hash is kept', async () => {
    const owner = await signUp();
    const ws = owner.workspaceId!;
    // The sign-up's own device is the account's first: nothing to say.
    expect((await eventsOf(ws)).filter((r) => r.action === 'sign_in_new_device')).to.deep.equal([]);
    const phone = request.agent(appUrl());
    const first = await signInWith(phone, owner);
    const cookie = ([] as string[]).concat(first.headers['set-cookie'] ?? []).find((c) => c.startsWith('ocs.device='))!;
    expect(cookie)
      .to.match(/HttpOnly/i)
      .and.match(/SameSite=Lax/i)
      .and.match(/Max-Age=\d{8}/);
    const device = cookie.split(';')[0].split('=')[1];
    const event = await theEvent(ws, 'sign_in_new_device');
    expect(event).to.include({ actor_id: owner.userId, user_agent: UA, target_label: owner.email });
    expect(event.ip).to.match(/127\.0\.0\.1/);

    // The same phone again, signed out and in: a known device.
    await signOut(phone);
    await signInWith(phone, owner);
    await signOut(phone);
    await signInWith(phone, owner);
    await theEvent(ws, 'sign_in_new_device');
    const devices = await testKnex()('user_devices').where({ user_id: owner.userId });
    expect(devices.map((d) => d.device_hash)).to.include(crypto.createHash('sha256').update(device).digest('hex'));
    expect(JSON.stringify(devices)).not.to.contain(device);

    // Another browser, and a cookie that was never ours: new devices.
    await signInWith(request.agent(appUrl()), owner);
    await signInWith(withDevice('A'.repeat(43)), owner);
    expect((await eventsOf(ws)).filter((r) => r.action === 'sign_in_new_device')).to.have.length(3);
    // A device known to another user is new to this one.
    const colleague = await memberOf(owner);
    await signInWith(withDevice(device), colleague);
    expect((await eventsOf(ws)).filter((r) => r.action === 'sign_in_new_device' && r.actor_id === colleague.userId)).to.have.length(1);
    // A failed sign-in records nothing.
    const stranger = withDevice(crypto.randomBytes(32).toString('base64url'));
    const page = await stranger.get('/login').expect(200);
    await stranger
      .post('/login')
      .type('form')
      .send({ _csrf: csrfFrom(page.text), email: owner.email, password: 'wrong password!' })
      .expect(401);
    expect((await eventsOf(ws)).filter((r) => r.action === 'sign_in_new_device')).to.have.length(4);
  });

  it('kept one year: the housekeeping pass deletes older events and devices not seen for a year, and keeps the rest', async () => {
    const owner = await signUp();
    const ws = owner.workspaceId!;
    const [aged, recent] = await testKnex()('audit_events')
      .insert([
        { workspace_id: ws, action: 'orders_exported', created_at: testKnex().raw("now() - interval '1 year' - interval '1 day'") },
        { workspace_id: ws, action: 'orders_exported', created_at: testKnex().raw("now() - interval '364 days'") },
      ])
      .returning('id');
    await testKnex()('user_devices').insert({
      user_id: owner.userId,
      device_hash: 'a'.repeat(64),
      last_seen_at: testKnex().raw("now() - interval '13 months'"),
    });
    const done = await services().housekeeping();
    expect(done.auditEvents).to.be.at.least(2);
    const left = await testKnex()('audit_events').where({ workspace_id: ws }).pluck('id');
    expect(left).to.include(recent.id).and.not.to.include(aged.id);
    expect(await testKnex()('user_devices').where({ user_id: owner.userId, device_hash: 'a'.repeat(64) })).to.deep.equal([]);
    // The sign-up's own device stays.
    expect(await testKnex()('user_devices').where({ user_id: owner.userId })).to.have.length(1);
  });

  it('the page in en, fr and ar: when (Morocco time) — who — what — from where; every action has its sentence', async () => {
    const owner = await signUp({ name: 'Amina Owner' });
    await owner.agent.post('/api/keys').set('User-Agent', UA).send({ name: 'Sheets' }).expect(201);
    const [row] = await testKnex()('audit_events').where({ workspace_id: owner.workspaceId }).select('created_at');
    const words = {
      en: 'created the API key',
      fr: 'a créé la clé API',
      ar: 'أنشأ مفتاح API',
    };
    for (const [lang, sentence] of Object.entries(words)) {
      const html = (await owner.agent.get('/workspace/audit').set('Accept-Language', lang).expect(200)).text;
      const text = pageText(html);
      expect(text, lang).to.contain(sentence).and.contain('Amina Owner').and.contain('Sheets');
      const locale = { en: 'en-GB', fr: 'fr-MA', ar: 'ar-MA' }[lang]!;
      const when = new Intl.DateTimeFormat(locale, {
        timeZone: 'Africa/Casablanca',
        day: 'numeric',
        month: 'short',
        year: 'numeric',
        hour: '2-digit',
        minute: '2-digit',
        hourCycle: 'h23',
      }).format(new Date(row.created_at));
      expect(decodeHTML(html), lang).to.contain(when);
      expect(html).to.match(/<bdi>(::ffff:)?127\.0\.0\.1<\/bdi>/);
      expect(text).to.contain(UA);
    }
    const catalogues = ['en', 'fr', 'ar'].map((lang) => JSON.parse(fs.readFileSync(path.join(ROOT, 'locales', `${lang}.json`), 'utf8')).auditPage.action);
    for (const action of AUDIT_ACTIONS) for (const catalogue of catalogues) expect(catalogue[action], action).to.be.a('string').and.not.equal('');
  });
});
