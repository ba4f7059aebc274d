/**
 * Shopify's steps: its OAuth callback (the hmac, the shop and the state checked, the token, the
 * subscriptions) and its three privacy topics.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { hmacMatches, parseStoreJson } from '../reader';
import { normalizeMoroccanPhone, readInboundJson } from '../../../../services/shared';
import type { WorkspaceActor } from '../../../../services/shared';
import { audit } from '../../../audit';
import { storeTarget } from '../../records';
import { sealGrant } from './admin';
import type { StoredShopifyCredentials } from './admin';
import { activate, afterState, discard, pendingConnection, takeState } from '../../connect/approvals';
import type { ConnectConfig, Connector } from '../../connect/connector';
import { ConnectError } from '../../connect/connector';
import { fieldsOf, idOf } from '../../connect/answers';
import {
  SHOPIFY_SHOP,
  SHOPIFY_TOPICS,
  shopifyHmacMatches,
  shopifySubscribe,
  shopifyGrant,
  shopifySubscriptionId,
  shopifyTokenRequest,
  shopifyUnsubscribe,
} from './api';

/** Where Shopify's API is for `shop`: the shop itself, unless the configuration names another origin. */
export function shopifyOrigin(config: ConnectConfig, shop: string): string {
  return config.shopifyApiOrigin ?? `https://${shop}`;
}

/**
 * Shopify's callback (`code`, `hmac`, `shop`, `state`, `timestamp`, `host`): the hmac, the shop's
 * name and the state are checked before anything is sent; then the code becomes the access token,
 * and the six subscriptions are made. Answers the new connection's id.
 */
export async function shopifyCallback(connector: Connector, workspace: WorkspaceActor, sessionId: string, query: URLSearchParams): Promise<string> {
  const app = connector.config.shopifyApp;
  if (!app) throw new ConnectError('not_configured', 'shopify');
  if (!shopifyHmacMatches(query, app.clientSecret)) throw new ConnectError('hmac', 'shopify');
  const shop = query.get('shop') ?? '';
  if (!SHOPIFY_SHOP.test(shop)) throw new ConnectError('shop', 'shopify');
  const state = await takeState(connector.knex, 'shopify', sessionId, query.get('state'));
  return afterState(state, async () => {
    // The state names the shop the owner typed: a callback for another shop is not theirs.
    if (state.shop !== shop.toLowerCase() || state.workspace_id !== workspace.id) throw new ConnectError('shop', 'shopify');
    if (query.get('error') || !query.get('code')) throw new ConnectError('refused', 'shopify');
    const origin = shopifyOrigin(connector.config, state.shop);
    // An expiring offline token (expiring=1): the access token, its expiry, the refresh token and its own.
    const answer = await connector.send(shopifyTokenRequest(origin, app, query.get('code')!));
    const grant = answer.delivered ? shopifyGrant(answer.body) : null;
    if (!grant) throw new ConnectError('platform', 'shopify');
    const credentials = sealGrant(connector.secrets, grant);
    if (state.connection_id) return reconnected(connector, state.connection_id, state.workspace_id, credentials);
    const token = grant.accessToken;
    const id = await pendingConnection(connector.knex, state, 'shopify', connector.secrets.seal(app.clientSecret));
    const made: string[] = [];
    try {
      for (const topic of SHOPIFY_TOPICS) {
        const answer = await connector.send(shopifySubscribe(origin, connector.config.shopifyApiVersion, token, topic, connector.url(`/hooks/stores/${id}`)));
        const subscription = answer.delivered ? shopifySubscriptionId(answer.body) : null;
        if (!subscription) throw new ConnectError('registration', 'shopify');
        made.push(subscription);
      }
    } catch (err) {
      await Promise.all(made.map((sub) => connector.send(shopifyUnsubscribe(origin, connector.config.shopifyApiVersion, token, sub))));
      await discard(connector.knex, id);
      throw err;
    }
    await activate(connector.knex, id, credentials);
    return id;
  }).catch((err) => {
    // A Reconnect that failed: the owner goes back to that connection's page, told why.
    if (err instanceof ConnectError && state.connection_id) err.reconnecting = state.connection_id;
    throw err;
  });
}

/**
 * A Reconnect's callback: the same connection (its id, its orders, its webhooks, which Shopify kept
 * while the app stayed installed) gets the new tokens, and needs no reconnecting any more.
 */
async function reconnected(connector: Connector, id: string, workspaceId: string, credentials: StoredShopifyCredentials): Promise<string> {
  await connector.knex.transaction(async (trx) => {
    const [row] = await trx('store_connections')
      .where({ id, workspace_id: workspaceId, kind: 'shopify' })
      .update({ write_back: JSON.stringify(credentials), reconnect_needed: false, write_back_error: null, write_back_error_code: null })
      .returning(['id', 'name']);
    if (!row) throw new ConnectError('state', 'shopify');
    await audit.record(trx, { workspaceId, action: 'store_reconnected', target: storeTarget(row.id, row.name), details: { kind: 'shopify' } });
  });
  return id;
}

/**
 * Shopify's privacy topics, signed with the app's client secret (X-Shopify-Hmac-Sha256):
 * `customers/data_request` is answered (we keep nothing beyond the orders the shop sees in its own
 * admin), `customers/redact` deletes that customer's orders of the shop's connections (those it names, and
 * those with the customer's phone), and
 * `shop/redact` deletes the shop's connections and their orders. 401 when the signature is wrong.
 */
export async function shopifyPrivacy(connector: Connector, raw: Buffer, headers: IncomingHttpHeaders): Promise<200 | 400 | 401 | 404> {
  const app = connector.config.shopifyApp;
  if (!app) return 404;
  const signature = headers['x-shopify-hmac-sha256'];
  if (!hmacMatches(raw, app.clientSecret, typeof signature === 'string' ? signature : undefined, 'base64')) return 401;
  // Ids as the text Shopify wrote: they exceed 2^53.
  const read = readInboundJson(raw, parseStoreJson);
  if (!read.ok) return 400;
  const body = fieldsOf(read.value);
  const shop = typeof body.shop_domain === 'string' ? body.shop_domain.toLowerCase() : '';
  if (!SHOPIFY_SHOP.test(shop)) return 400;
  const topic = headers['x-shopify-topic'];
  // Only the connections our app made: a body signed with the app's secret speaks for those, never
  // for a connection the shop made by hand (its own key) nor for another workspace's by another way.
  const connections = connector.knex('store_connections').where({ kind: 'shopify', shop, connected_by: 'oauth' }).select('id');
  if (topic === 'customers/redact') {
    const named = (Array.isArray(body.orders_to_redact) ? body.orders_to_redact : []).map(idOf).filter((id): id is string => !!id && id.length <= 200);
    // The orders Shopify names, and the customer's other orders of these connections by their phone
    // (the one thing of the customer we keep): Shopify leaves out orders of the last six months.
    const customer = body.customer && typeof body.customer === 'object' ? (body.customer as Record<string, unknown>) : {};
    const phone = typeof customer.phone === 'string' ? normalizeMoroccanPhone(customer.phone.slice(0, 40)) : null;
    if (named.length > 0 || phone)
      await connector
        .knex('orders')
        .whereIn('store_connection_id', connections)
        .where((which) => {
          if (named.length > 0) which.orWhereIn('external_id', named);
          if (phone) which.orWhere('phone', phone);
        })
        .delete();
  } else if (topic === 'shop/redact') {
    await connector.knex.transaction(async (trx) => {
      const ids = (await trx('store_connections').where({ kind: 'shopify', shop, connected_by: 'oauth' }).select('id')).map((row) => row.id);
      if (ids.length === 0) return;
      await trx('orders').whereIn('store_connection_id', ids).delete();
      await trx('store_connections').whereIn('id', ids).delete();
    });
  } else if (topic !== 'customers/data_request') return 400;
  return 200;
}
