import { expect } from 'chai';
import request from 'supertest';
import { hashKey } from '../../services/accounts';
import { appUrl, signUp } from '../helpers/app';
import { testKnex } from '../helpers/db';
import { createKey } from '../helpers/keys';

describe('API keys (/api/keys)', () => {
  describe('POST /api/keys', () => {
    it('201 with the full key, sk_live_ + 43 characters, stored only as a SHA-256 hash', async () => {
      const owner = await signUp();
      const res = await owner.agent.post('/api/keys').send({ name: 'Shopify plugin' }).expect(201);
      expect(res.body.key).to.match(/^sk_live_[A-Za-z0-9_-]{43}$/);
      expect(res.body).to.include({ name: 'Shopify plugin', expires_at: null, last_used_at: null, revoked_at: null });
      expect(res.body.prefix).to.equal(res.body.key.slice(0, 14));
      expect(res.headers['cache-control']).to.equal('no-store');
      const row = await testKnex()('api_keys').where({ id: res.body.id }).first();
      expect(row).to.include({ user_id: owner.userId, workspace_id: owner.workspaceId, key_hash: hashKey(res.body.key) });
      expect(JSON.stringify(row)).not.to.contain(res.body.key);
    });

    it('keys differ every time (CSPRNG)', async () => {
      const owner = await signUp();
      const keys = new Set<string>();
      for (let i = 0; i < 5; i++) keys.add((await createKey(owner)).key);
      expect(keys.size).to.equal(5);
    });

    for (const days of [1, 365]) {
      it(`accepts expiresInDays ${days} and sets expires_at that many days ahead`, async () => {
        const owner = await signUp();
        const res = await owner.agent.post('/api/keys').send({ expiresInDays: days }).expect(201);
        const ahead = (new Date(res.body.expires_at).getTime() - Date.now()) / 86_400_000;
        expect(ahead).to.be.within(days - 0.01, days + 0.01);
      });
    }

    for (const days of [0, 366, 1.5, 'x', -1]) {
      it(`refuses expiresInDays ${JSON.stringify(days)} with 400 VALIDATION_ERROR and creates nothing`, async () => {
        const owner = await signUp();
        const res = await owner.agent.post('/api/keys').send({ expiresInDays: days }).expect(400);
        expect(res.body.code).to.equal('VALIDATION_ERROR');
        expect(res.body.fields).to.have.property('expiresInDays');
        expect(await testKnex()('api_keys').where({ workspace_id: owner.workspaceId })).to.have.length(0);
      });
    }

    it('401 without a session, and a bearer token is no session', async () => {
      const res = await request(appUrl()).post('/api/keys').set('Authorization', 'Bearer whatever').send({}).expect(401);
      expect(res.body).to.deep.equal({ error: 'Unauthorized' });
    });
  });

  describe('GET /api/keys', () => {
    it('lists the workspace keys, newest first, never with the secret', async () => {
      const owner = await signUp();
      const first = await createKey(owner, { name: 'first' });
      const second = await createKey(owner, { name: 'second' });
      const res = await owner.agent.get('/api/keys').expect(200);
      expect(res.body.keys.map((k: { id: string }) => k.id)).to.deep.equal([second.id, first.id]);
      expect(Object.keys(res.body.keys[0]).sort()).to.deep.equal(['created_at', 'expires_at', 'id', 'last_used_at', 'name', 'prefix', 'revoked_at']);
      expect(JSON.stringify(res.body)).not.to.contain(first.key).and.not.to.contain(second.key);
    });

    it('shows no key of another workspace', async () => {
      const owner = await signUp();
      await createKey(owner);
      const other = await signUp();
      expect((await other.agent.get('/api/keys').expect(200)).body.keys).to.deep.equal([]);
    });
  });

  describe('DELETE /api/keys/:id', () => {
    it('204 revokes the key', async () => {
      const owner = await signUp();
      const { id } = await createKey(owner);
      const res = await owner.agent.delete(`/api/keys/${id}`).expect(204);
      expect(res.text).to.equal('');
      const row = await testKnex()('api_keys').where({ id }).first();
      expect(row.revoked_at).to.be.instanceOf(Date);
    });

    it("404 for another workspace's key, which stays live", async () => {
      const owner = await signUp();
      const { id } = await createKey(owner);
      const other = await signUp();
      expect((await other.agent.delete(`/api/keys/${id}`).expect(404)).body).to.deep.equal({ error: 'API key not found' });
      await other.agent.delete('/api/keys/not-a-uuid').expect(404);
      expect((await testKnex()('api_keys').where({ id }).first()).revoked_at).to.equal(null);
    });
  });
});
