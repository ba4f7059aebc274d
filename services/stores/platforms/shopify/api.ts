import crypto from 'node:crypto';
import type { OutboundRequest } from '../../../../integrations/http';
import { sameSecret } from '../../../../integrations/secret-compare';
import { fieldsOf, idOf, jsonOf } from '../../connect/answers';

/**
 * Shopify's approval flow and webhook API as plain requests and readers: no tables, no HTTP of our
 * own. Every origin is given (a setting), so tests point them at doubles.
 */

/** Shopify's scopes: orders in, the tag written back, and the fulfilments the app is told of. */
const SHOPIFY_SCOPES = 'read_orders,write_orders,read_fulfillments';
export const SHOPIFY_TOPICS = ['ORDERS_CREATE', 'ORDERS_UPDATED', 'ORDERS_CANCELLED', 'FULFILLMENTS_CREATE', 'FULFILLMENTS_UPDATE', 'APP_UNINSTALLED'] as const;

/** A shop's myshopify.com name, as Shopify's callback and our form must give it. */
export const SHOPIFY_SHOP = /^[a-zA-Z0-9][a-zA-Z0-9-]*\.myshopify\.com$/;

/**
 * Whether Shopify's callback `hmac` is right: hex HMAC-SHA256, keyed with the app's client secret,
 * of the other query parameters sorted by name, `key=value` joined with `&` (encoded as a query).
 */
export function shopifyHmacMatches(query: URLSearchParams, clientSecret: string): boolean {
  const given = query.get('hmac') ?? '';
  const rest = [...query.entries()].filter(([key]) => key !== 'hmac' && key !== 'signature').sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const message = new URLSearchParams(rest).toString();
  const expected = Buffer.from(crypto.createHmac('sha256', clientSecret).update(message).digest('hex'));
  const received = Buffer.from(given.toLowerCase());
  return sameSecret(received, expected);
}

export function shopifyAuthorizeUrl(origin: string, clientId: string, redirectUri: string, state: string): string {
  const query = new URLSearchParams({ client_id: clientId, scope: SHOPIFY_SCOPES, redirect_uri: redirectUri, state });
  return `${origin}/admin/oauth/authorize?${query}`;
}

/**
 * The code exchange, asking for an expiring offline token (`expiring=1`): Shopify answers an access
 * token good for an hour and a refresh token (from 1 January 2027 a public app's non-expiring token
 * is refused).
 */
export function shopifyTokenRequest(origin: string, app: { clientId: string; clientSecret: string }, code: string): OutboundRequest {
  return {
    method: 'POST',
    url: `${origin}/admin/oauth/access_token`,
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ client_id: app.clientId, client_secret: app.clientSecret, code, expiring: 1 }),
  };
}

/** A new access token (and a new refresh token) for an expiring offline token's refresh token. */
export function shopifyRefreshRequest(origin: string, app: { clientId: string; clientSecret: string }, refreshToken: string): OutboundRequest {
  return {
    method: 'POST',
    url: `${origin}/admin/oauth/access_token`,
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ client_id: app.clientId, client_secret: app.clientSecret, grant_type: 'refresh_token', refresh_token: refreshToken }),
  };
}

/** What Shopify's token endpoint grants: the access token, and for an expiring one its lifetime and the refresh token with its own. */
export interface ShopifyGrant {
  accessToken: string;
  /** Seconds the access token lasts (3600); null for a non-expiring token. */
  expiresIn: number | null;
  refreshToken: string | null;
  /** Seconds the refresh token lasts (90 days); null when not said. */
  refreshTokenExpiresIn: number | null;
}

const seconds = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.floor(value) : null);

/** The grant in the token endpoint's answer, or null when it carries no access token (or an expiring one without its refresh token). */
export function shopifyGrant(body: string): ShopifyGrant | null {
  const answer = jsonOf(body);
  const accessToken = idOf(answer.access_token);
  if (!accessToken) return null;
  const expiresIn = seconds(answer.expires_in);
  const refreshToken = typeof answer.refresh_token === 'string' && answer.refresh_token ? answer.refresh_token : null;
  if (expiresIn !== null && !refreshToken) return null;
  return { accessToken, expiresIn, refreshToken, refreshTokenExpiresIn: seconds(answer.refresh_token_expires_in) };
}

const SUBSCRIBE = `mutation Subscribe($topic: WebhookSubscriptionTopic!, $uri: String!) {
  webhookSubscriptionCreate(topic: $topic, webhookSubscription: {uri: $uri, format: JSON}) { webhookSubscription { id } userErrors { field message } }
}`;
const UNSUBSCRIBE = `mutation Unsubscribe($id: ID!) {
  webhookSubscriptionDelete(id: $id) { deletedWebhookSubscriptionId userErrors { field message } }
}`;

function shopifyGraphql(origin: string, apiVersion: string, token: string, query: string, variables: Record<string, string>): OutboundRequest {
  return {
    method: 'POST',
    url: `${origin}/admin/api/${apiVersion}/graphql.json`,
    headers: { 'content-type': 'application/json', 'x-shopify-access-token': token },
    body: JSON.stringify({ query, variables }),
  };
}

export const shopifySubscribe = (origin: string, apiVersion: string, token: string, topic: string, uri: string) =>
  shopifyGraphql(origin, apiVersion, token, SUBSCRIBE, { topic, uri });
export const shopifyUnsubscribe = (origin: string, apiVersion: string, token: string, id: string) =>
  shopifyGraphql(origin, apiVersion, token, UNSUBSCRIBE, { id });

/** The id of the subscription Shopify made, or null when its answer carries errors or userErrors. */
export function shopifySubscriptionId(body: string): string | null {
  const answer = jsonOf(body);
  const created = fieldsOf(fieldsOf(answer.data).webhookSubscriptionCreate);
  const errors = [answer.errors, created.userErrors].some((list) => Array.isArray(list) && list.length > 0);
  const id = fieldsOf(created.webhookSubscription).id;
  return !errors && typeof id === 'string' && id ? id : null;
}
