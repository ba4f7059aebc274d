import fs from 'node:fs';
import path from 'node:path';
import type { Express } from 'express';
import request from 'supertest';
import { ROOT } from '../../config';
import { newMessageId, signedHeaders } from '../../integrations/signing';
import { ORDER_STATUSES } from '../../services/orders';
import { STORE_PLATFORMS } from '../../services/stores';
import type { SignedIn } from './app';
import { invitationPath, signUp, uniqueEmail } from './app';
import { testKnex } from './db';
import { testSecrets } from './secrets';
import { seedWhatsAppStep } from './whatsapp';

/**
 * Every GET route of routes/pages/*.ts. A new page must be added here (and given its addresses in
 * `dashboardPages`), or `pageRoutesInSource()` differs and the test that compares them fails.
 */
export const PAGE_ROUTES = [
  '/',
  '/signup',
  '/login',
  '/join/:token',
  '/workspace',
  '/workspace/audit',
  '/orders',
  '/orders/new',
  '/orders/import',
  '/orders/import/sample.csv',
  '/orders/:id',
  '/orders/:id/delete',
  '/customers',
  '/customers/:phone',
  '/customers/:phone/export.json',
  '/customers/:phone/export.csv',
  '/customers/:phone/erase',
  '/stats',
  '/stats/team',
  '/deliveries',
  '/deliveries/import',
  '/calls',
  '/calls/:callId',
  '/settings',
  '/agents',
  '/agents/:id',
  '/api-keys',
  '/webhooks',
  '/webhooks/:id',
  '/webhooks/:id/delete',
  '/stores',
  '/stores/new',
  '/stores/:id',
  '/stores/:id/delete',
  '/stores/shopify/callback',
  '/stores/youcan/callback',
  '/stores/woocommerce/return',
  '/credits',
  '/team',
  '/deliveries/carriers',
  '/orders/ship',
  '/shipments/:id',
  '/shipments/:id/labels.pdf',
  '/orders/labels.pdf',
] as const;
export type PageRoute = (typeof PAGE_ROUTES)[number];

/** Routes that answer no page of their own: redirects (a platform's approval coming back), and a file to download. */
export const NOT_PAGES: readonly PageRoute[] = [
  '/',
  '/orders/import/sample.csv',
  '/customers/:phone/export.json',
  '/customers/:phone/export.csv',
  '/stores/shopify/callback',
  '/stores/youcan/callback',
  '/stores/woocommerce/return',
  '/shipments/:id/labels.pdf',
  '/orders/labels.pdf',
];
/** Pages a visitor sees signed out; every other page is the signed-in owner's. */
export const SIGNED_OUT: readonly PageRoute[] = ['/signup', '/login', '/join/:token'];

/**
 * The GET routes the page routers declare, read from their source; and the page each store platform
 * sends the owner back to after its approval, which routes/pages/stores.ts declares from the registry.
 */
export function pageRoutesInSource(): string[] {
  const dir = path.join(ROOT, 'routes', 'pages');
  const declared = fs
    .readdirSync(dir)
    .filter((file) => file.endsWith('.ts'))
    .flatMap((file) => [...fs.readFileSync(path.join(dir, file), 'utf8').matchAll(/\brouter\.get\(\s*'([^']+)'/g)].map((m) => m[1]));
  const approvalReturns = STORE_PLATFORMS.flatMap((platform) => ('connect' in platform ? [`/stores/${platform.kind}/${platform.connect.back}`] : []));
  return [...declared, ...approvalReturns];
}

const ORDERS = [
  { clientName: 'فاطمة الزهراء', phone: '06 12 34 56 78', storeName: 'Pâtisserie Élise', productsName: 'Crème brûlée ×2', address: 'Derb Sultan, Casablanca' },
  { clientName: 'Omar Tazi', phone: '+212 7 12 34 56 78', storeName: 'Atlas', productsName: 'Babouches, size 42', address: 'Hay Riad, Rabat' },
  { clientName: 'Hélène Martin', phone: '0661234567', storeName: 'Atlas', productsName: 'Argan oil x2', address: 'Gueliz, Marrakech' },
  { clientName: 'يوسف العلوي', phone: '0522123456', storeName: 'Dar Zellige', productsName: 'طاجين فخار', address: 'حي السلام، فاس' },
];

export interface Dashboard {
  owner: SignedIn;
  /** The addresses of each route, with the data made here. */
  pages: Record<PageRoute, string[]>;
}

/** A custom store connection's sender: the key we made signs each message, as the store would. */
function deliver(target: Express | string, storeId: string, secret: string, body: object) {
  const raw = JSON.stringify(body);
  return request(target)
    .post(`/hooks/stores/${storeId}`)
    .set(signedHeaders(secret, newMessageId(), raw, new Date()))
    .set('Content-Type', 'application/json')
    .send(raw)
    .expect(200);
}

/**
 * A workspace as a shop has it after some weeks, made through the API as a person or a store would:
 * orders in every status, a call ended with notes and one open, an order handler and a voice agent,
 * an API key, a webhook endpoint, store connections whose log has a created and a rejected order, a
 * member and a pending invitation, credits, a WhatsApp agent whose order went on to a person. `target` is an app or a running server's URL.
 */
export async function realisticDashboard(target: Express | string): Promise<Dashboard> {
  const owner = await signUp({ target, workspace: 'Dar Atlas', name: 'Salma Idrissi' });
  const api = owner.agent;
  await api.post('/api/agents').send({ name: 'Youssef', orderHandler: true }).expect(201);
  const voice = (await api.post('/api/agents').send({ name: 'Robot', kind: 'voice', endpointUrl: 'http://127.0.0.1:9/calls' }).expect(201)).body;
  await api
    .put('/api/settings/calls')
    .send({ callingHours: { start: '00:00', end: '24:00' } })
    .expect(200);
  await testKnex()('credit_ledger').insert({ user_id: owner.userId, kind: 'grant', amount: 100 });

  const orders: Array<{ id: string; status: string }> = [];
  for (const [i, status] of ORDER_STATUSES.entries()) {
    const order = { ...ORDERS[i % ORDERS.length], totalAmount: 149 + i * 100, status };
    orders.push((await api.post('/api/orders').send(order).expect(201)).body);
  }
  // A call ended with notes, then one left open.
  const ended = (await api.post('/api/calls/next').expect(200)).body;
  await api.post(`/api/calls/${ended.call.id}/outcome`).send({ outcome: 'confirmed', notes: 'La cliente confirme, livraison samedi matin.' }).expect(200);
  const open = (await api.post('/api/calls/next').expect(200)).body;

  await api.post('/api/keys').send({ name: 'Plugin WordPress' }).expect(201);
  const endpoint = (await api.post('/api/webhooks').send({ url: 'http://127.0.0.1:9/hooks' }).expect(201)).body;
  await api.post(`/api/webhooks/${endpoint.id}/test`).expect(202);

  const sheet = (await api.post('/api/stores').send({ kind: 'custom', name: 'Feuille Google' }).expect(201)).body;
  const base = {
    client_name: 'Karim Tazi',
    phone: '07 12 34 56 78',
    products_name: '1 × Théière en argent',
    address: 'Bd Zerktouni, Casablanca',
    total_amount: '450',
  };
  await deliver(target, sheet.id, sheet.secret, { type: 'order.created', data: { ...base, external_id: 'row-17' } });
  await deliver(target, sheet.id, sheet.secret, { type: 'order.created', data: { ...base, external_id: 'row-18', phone: '12' } });
  const shopify = (
    await api.post('/api/stores').send({ kind: 'shopify', name: 'Atlas', shop: 'atlas.myshopify.com', secret: 'shpss_0123456789abcdef' }).expect(201)
  ).body;
  await api.put(`/api/stores/${shopify.id}`).send({ enabled: false }).expect(200);

  // A WhatsApp agent whose message was read and answered in words, the order gone on to a person.
  const whatsapp = await seedWhatsAppStep(api, false);
  orders.push({ id: whatsapp.orderId, status: 'pending' });
  // Deliveries: one delivered, one refused (the carrier's words kept), a carrier that pushes.
  await api
    .put(`/api/orders/${ended.order.id}/delivery`)
    .send({ status: 'delivered', carrier: 'Ozon Express', trackingNumber: 'OZ123456789MA', carrierStatus: 'Livré' })
    .expect(200);
  await api.put(`/api/orders/${orders[2].id}/delivery`).send({ status: 'refused', carrier: 'Amana', carrierStatus: 'Refusé par le client' }).expect(200);
  await api.post('/api/carriers').send({ kind: 'custom', name: 'Ozon Express' }).expect(201);
  await api
    .post('/api/orders')
    .send({ ...ORDERS[2], productsName: 'Savon noir' })
    .expect(201);
  await signUp({ target, invitedBy: owner, name: 'Nadia Berrada' });
  const joinPath = await invitationPath(owner, uniqueEmail('invited'));

  // A carrier account (written directly: making one checks its keys at the carrier) and a shipment:
  // one parcel sent, one waiting for the carrier's city.
  const [account] = await testKnex()('carrier_accounts')
    .insert({
      workspace_id: owner.workspaceId,
      kind: 'sendit',
      name: 'Sendit Casablanca',
      credentials: testSecrets.seal(JSON.stringify({ public_key: 'pk', secret_key: 'sk' })),
      hook_token: testSecrets.seal('token'),
      pickup_city_id: '1',
      unknown_words: JSON.stringify({ EN_ATTENTE_DOUANE: 2 }),
    })
    .returning('id');
  await testKnex()('carrier_cities').insert([
    { account_id: account.id, city_id: '1', name: 'Casablanca', arabic_name: 'الدار البيضاء' },
    { account_id: account.id, city_id: '3', name: 'Fes', arabic_name: 'فاس' },
  ]);
  const confirmed = orders.find((o) => o.status === 'confirmed')!;
  const [shipment] = await testKnex()('shipments')
    .insert({ workspace_id: owner.workspaceId, account_id: account.id, created_by: owner.userId })
    .returning('id');
  await testKnex()('parcels').insert([
    {
      workspace_id: owner.workspaceId,
      order_id: confirmed.id,
      account_id: account.id,
      shipment_id: shipment.id,
      state: 'sent',
      reference: confirmed.id,
      city_id: '1',
      tracking: 'SD100042',
    },
    { workspace_id: owner.workspaceId, order_id: orders[1].id, account_id: account.id, shipment_id: shipment.id, state: 'needs_city', reference: orders[1].id },
  ]);

  const orderPages = [orders[0], orders[3], orders[5], orders[8], orders[orders.length - 1]].map((o) => `/orders/${o.id}`);
  const customer = `/customers/${encodeURIComponent('+212612345678')}`;
  return {
    owner,
    pages: {
      '/': ['/'],
      '/signup': ['/signup'],
      '/login': ['/login'],
      '/join/:token': [joinPath],
      '/workspace': ['/workspace'],
      '/workspace/audit': ['/workspace/audit'],
      '/orders': ['/orders', '/orders?status=pending', '/orders?q=nobody-has-this-name'],
      '/orders/new': ['/orders/new'],
      '/orders/import': ['/orders/import'],
      '/orders/import/sample.csv': ['/orders/import/sample.csv'],
      '/orders/:id': orderPages,
      '/orders/:id/delete': [`/orders/${orders[0].id}/delete`],
      '/customers': ['/customers'],
      // 06 12 34 56 78: the first and the fifth order's, its calls' notes among them; and a number without orders.
      '/customers/:phone': [customer, '/customers/0699999999'],
      '/customers/:phone/export.json': [`${customer}/export.json`],
      '/customers/:phone/export.csv': [`${customer}/export.csv`],
      '/customers/:phone/erase': [`${customer}/erase`],
      '/stats': ['/stats'],
      '/stats/team': ['/stats/team'],
      '/deliveries': ['/deliveries'],
      '/deliveries/import': ['/deliveries/import'],
      '/calls': ['/calls'],
      '/calls/:callId': [`/calls/${open.call.id}`, `/calls/${ended.call.id}`],
      '/settings': ['/settings'],
      '/agents': ['/agents'],
      '/agents/:id': [`/agents/${voice.id}`, `/agents/${whatsapp.agentId}`],
      '/api-keys': ['/api-keys'],
      '/webhooks': ['/webhooks'],
      '/webhooks/:id': [`/webhooks/${endpoint.id}`],
      '/webhooks/:id/delete': [`/webhooks/${endpoint.id}/delete`],
      '/stores': ['/stores'],
      '/stores/new': [
        '/stores/new',
        '/stores/new?kind=woocommerce',
        '/stores/new?kind=youcan',
        '/stores/new?kind=custom',
        '/stores/new?kind=woocommerce&connect_error=registration',
      ],
      '/stores/shopify/callback': ['/stores/shopify/callback'],
      '/stores/youcan/callback': ['/stores/youcan/callback'],
      '/stores/woocommerce/return': ['/stores/woocommerce/return'],
      '/stores/:id': [`/stores/${sheet.id}`, `/stores/${shopify.id}`],
      '/stores/:id/delete': [`/stores/${sheet.id}/delete`],
      '/credits': ['/credits'],
      '/team': ['/team'],
      '/deliveries/carriers': ['/deliveries/carriers', '/deliveries/carriers?kind=yalidine'],
      '/orders/ship': ['/orders/ship'],
      '/shipments/:id': [`/shipments/${shipment.id}`],
      '/shipments/:id/labels.pdf': [`/shipments/${shipment.id}/labels.pdf`],
      '/orders/labels.pdf': [`/orders/labels.pdf?ids=${confirmed.id}`],
    },
  };
}
