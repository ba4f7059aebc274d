import crypto from 'node:crypto';
import { expect } from 'chai';
import type { SignedIn } from './app';

/** Creates an API key through POST /api/keys and returns the full key. */
export async function createKey(owner: SignedIn, body: object = { name: 'test key' }): Promise<{ id: string; key: string }> {
  const res = await owner.agent.post('/api/keys').send(body).expect(201);
  expect(res.body.key).to.be.a('string');
  return { id: res.body.id, key: res.body.key };
}

/** A client IP of the test's own (apps under test trust one proxy hop), so IP budgets never collide. */
export function randomIp(): string {
  const b = crypto.randomBytes(3);
  return `10.${b[0]}.${b[1]}.${b[2]}`;
}
