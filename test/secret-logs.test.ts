import crypto from 'node:crypto';
import { expect } from 'chai';
import pino from 'pino';
import type { Response } from 'supertest';
import { createApp } from '../app';
import { loadConfig } from '../config';
import { signUp, TEST_ENV } from './helpers/app';
import { testKnex, testSessionPool } from './helpers/db';

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
      sent.push(...(query.bindings ?? []).filter((b): b is string => typeof b === 'string' && b.startsWith('whsec_')));
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
    expect((await knex('webhook_endpoints').where({ id: endpoint.id }).first()).secret).to.equal(endpoint.secret);
  });
});
