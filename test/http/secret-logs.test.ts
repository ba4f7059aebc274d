import crypto from 'node:crypto';
import { expect } from 'chai';
import pino from 'pino';
import type { Response } from 'supertest';
import { createApp } from '../../app';
import { loadConfig } from '../../config';
import { createLogger } from '../../logger';
import { signUp, TEST_ENV } from '../helpers/app';
import { testKnex, testSessionPool } from '../helpers/db';
import { Secrets } from '../../integrations/secrets';
import { opened } from '../helpers/secrets';

describe('nothing secret in logs (issue 28, item 8)', () => {
  it('a secret rotation whose statement fails logs the error without the new secret, and the client gets a clean 500', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
    const knex = testKnex();
    const target = createApp({ config: loadConfig(TEST_ENV), knex, sessionPool: testSessionPool(), logger });
    const owner = await signUp({ target });
    const endpoint = (await owner.agent.post('/api/webhooks').send({ url: 'http://127.0.0.1:9/hooks' }).expect(201)).body;
    expect(endpoint.id).to.match(/^[0-9a-f-]{36}$/);

    // The new secret, as knex binds it into the rotation's UPDATE.
    const sent: string[] = [];
    const onQuery = (query: { sql: string; bindings?: unknown[] }) => {
      if (!query.sql.startsWith('update "webhook_endpoints"')) return;
      // Sealed with SECRETS_KEY before it is bound (issue 58): its ciphertext is kept out of the logs all the same.
      sent.push(...(query.bindings ?? []).filter((b): b is string => typeof b === 'string' && Secrets.isSealed(b)));
    };
    // A constraint that this one row can no longer meet: the rotation's UPDATE really fails, and
    // Postgres reports the row it refused (the new secret in it), as for any constraint violation.
    const constraint = `secret_logs_${crypto.randomBytes(4).toString('hex')}`;
    await knex.raw(`ALTER TABLE webhook_endpoints ADD CONSTRAINT ?? CHECK (id <> '${endpoint.id}') NOT VALID`, [constraint]);
    knex.on('query', onQuery);
    let res: Response;
    try {
      res = await owner.agent.post(`/api/webhooks/${endpoint.id}/rotate-secret`);
    } finally {
      knex.off('query', onQuery);
      await knex.raw('ALTER TABLE webhook_endpoints DROP CONSTRAINT ??', [constraint]);
    }

    expect(res.status).to.equal(500);
    expect(res.body).to.deep.equal({ error: 'Internal server error' });
    expect(sent).to.have.length(1);
    expect(res.text).not.to.contain(sent[0]);
    const log = lines.join('');
    // The failure is logged with its SQL and the constraint it broke, but not the values bound to it.
    expect(log).to.contain('unhandled error').and.contain(constraint).and.contain('update \\"webhook_endpoints\\" set \\"secret\\" = $1');
    expect(log).not.to.contain(sent[0]);
    expect(opened(await knex('webhook_endpoints').where({ id: endpoint.id }).first()).secret).to.equal(endpoint.secret);
  });
});

describe('nothing secret in logs from any failed statement (issue 37, item 2)', () => {
  it('a marker secret in every secret-bearing field: each failing statement is logged without it (where, detail, hint, bindings)', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
    const knex = testKnex();
    const target = createApp({ config: loadConfig(TEST_ENV), knex, sessionPool: testSessionPool(), logger });
    const owner = await signUp({ target });
    const mark = `MARKER${crypto.randomBytes(6).toString('hex')}`;
    const shopify = (
      await owner.agent
        .post('/api/stores')
        .send({ kind: 'shopify', name: 'S', shop: 'atlas.myshopify.com', secret: `${mark}-a` })
        .expect(201)
    ).body;
    const woo = (await owner.agent.post('/api/stores').send({ kind: 'woocommerce', name: 'W', shop: 'https://boutique.ma' }).expect(201)).body;
    const agent = (await owner.agent.post('/api/agents').send({ name: 'Robot', kind: 'voice', endpointUrl: 'http://127.0.0.1:9/a' }).expect(201)).body;
    const endpoint = (await owner.agent.post('/api/webhooks').send({ url: 'http://127.0.0.1:9/hooks' }).expect(201)).body;
    const whatsapp = (
      await owner.agent
        .post('/api/agents')
        .send({
          name: 'WhatsApp',
          kind: 'whatsapp',
          phoneNumberId: '106540352242922',
          accessToken: `EAAG${mark}-g0000000000`,
          appSecret: `${mark}h0000000000`,
          templateName: 'order_confirmation',
          templateLanguage: 'fr',
          fallbackAgentId: agent.id,
        })
        .expect(201)
    ).body;

    // Every string bound to a statement on these tables: the secrets we made (keys' hashes, whsec_…) and the markers.
    const tables = ['api_keys', 'agents', 'webhook_endpoints', 'store_connections', 'whatsapp_agents'];
    const sent = new Set<string>();
    const onQuery = (query: { sql: string; bindings?: unknown[] }) => {
      if (!tables.some((t) => query.sql.includes(`"${t}"`))) return;
      for (const b of query.bindings ?? [])
        if (typeof b === 'string' && (b.includes(mark) || Secrets.isSealed(b) || /^whsec_|^[0-9a-f]{64}$/.test(b))) sent.add(b);
    };
    // A constraint no new row version meets: every insert and update of these tables fails, and
    // Postgres reports the row it refused (the secrets in it) in the error's detail.
    const constraint = `secret_logs_${crypto.randomBytes(4).toString('hex')}`;
    for (const table of tables) await knex.raw(`ALTER TABLE ?? ADD CONSTRAINT ?? CHECK (false) NOT VALID`, [table, constraint]);
    knex.on('query', onQuery);
    const statuses: number[] = [];
    try {
      for (const send of [
        () => owner.agent.post('/api/keys').send({ name: 'k' }),
        () => owner.agent.post('/api/agents').send({ name: 'Robot 2', kind: 'voice', endpointUrl: 'http://127.0.0.1:9/b' }),
        () => owner.agent.post(`/api/agents/${agent.id}/rotate-secret`),
        () => owner.agent.post('/api/webhooks').send({ url: 'http://127.0.0.1:9/h2' }),
        () => owner.agent.post(`/api/webhooks/${endpoint.id}/rotate-secret`),
        () => owner.agent.post('/api/stores').send({ kind: 'youcan', name: 'Y', secret: `${mark}-b` }),
        () => owner.agent.put(`/api/stores/${shopify.id}`).send({ secret: `${mark}-c`, write_back: { access_token: `shpat_${mark}-d` } }),
        () => owner.agent.put(`/api/stores/${woo.id}`).send({ write_back: { consumer_key: `ck_${mark}-e`, consumer_secret: `cs_${mark}-f` } }),
        () => owner.agent.put(`/api/agents/${whatsapp.id}`).send({ accessToken: `EAAG${mark}-i0000000000`, appSecret: `${mark}j0000000000` }),
      ]) {
        statuses.push((await send()).status);
      }
    } finally {
      knex.off('query', onQuery);
      for (const table of tables) await knex.raw('ALTER TABLE ?? DROP CONSTRAINT ??', [table, constraint]);
    }
    expect(statuses).to.deep.equal([500, 500, 500, 500, 500, 500, 500, 500, 500]);
    const log = lines.join('');
    expect(log.split('unhandled error').length - 1).to.equal(9);
    expect(log).to.contain(constraint);
    // The markers are bound sealed (issue 58): each statement's sealed values, none in the log.
    expect([...sent].filter((s) => Secrets.isSealed(s))).to.have.length.of.at.least(4);
    for (const secret of sent) expect(log).not.to.contain(secret);
    expect(log).not.to.contain(mark);

    // A value Postgres refuses as text names itself in `where` ("unnamed portal parameter $1 = '…'"),
    // and a statement that times out carries its bindings: both are logged without them.
    const errors: unknown[] = [];
    await knex('store_connections')
      .where({ id: woo.id })
      .update({ secret: `${mark}-g\u0000` })
      .catch((err: unknown) => errors.push(err));
    await knex
      .raw('SELECT pg_sleep(1), ?::text', [`${mark}-h`])
      .timeout(20)
      .catch((err: unknown) => errors.push(err));
    expect(errors).to.have.length(2);
    // Logged as the web and worker processes log (the logger every error line goes through).
    const appLines: string[] = [];
    const appLogger = createLogger('info', { destination: { write: (line: string) => void appLines.push(line) } });
    for (const err of errors) appLogger.error({ err }, 'statement failed');
    expect(appLines.join('')).to.contain('statement failed').and.contain('22021').and.not.to.contain(mark);
  });
});
