import type { Services } from '../../services';
import type { SignedIn } from './app';
import { testKnex } from './db';

/** An order made through the API and confirmed by a person (PUT), as the ship flow needs it; `fields` override. */
export async function confirmedOrder(shop: SignedIn, fields: Record<string, unknown> = {}): Promise<string> {
  const { body } = await shop.agent
    .post('/api/orders')
    .send({
      clientName: 'Amina Benali',
      phone: '0612345678',
      storeName: 'Atlas Shop',
      productsName: 'Babouches',
      totalAmount: '249.00',
      city: 'Casa',
      address: 'Derb Sultan 12',
      ...fields,
    })
    .expect(201);
  await shop.agent.put(`/api/orders/${body.id}`).send({ status: 'confirmed' }).expect(200);
  return body.id;
}

/** Runs the shop's queued parcels' jobs once each, as the worker would, and returns what came of each. */
export async function sendQueued(services: Services, shop: SignedIn): Promise<string[]> {
  const queued: string[] = await testKnex()('parcels').where({ state: 'queued', workspace_id: shop.workspaceId }).orderBy(['created_at', 'id']).pluck('id');
  const results: string[] = [];
  for (const id of queued) results.push(await services.parcels.send(id));
  return results;
}
