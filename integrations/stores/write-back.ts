import type { DeliveryResult, OutboundRequest } from '../http';

/**
 * What each store is told when one of its orders reaches its outcome:
 * the requests, built from plain values, and how the store's answer reads. Knows Shopify's GraphQL
 * and WooCommerce's REST API, nothing of our tables; the credentials go into headers only (Shopify's
 * token is added by the one who sends, services/stores/shopify-admin.ts).
 */
export type Outcome = 'confirmed' | 'unconfirmed';

export interface WriteBackOrder {
  externalId: string;
  status: Outcome;
  /** What the call that reached the outcome noted, if it did. */
  summary: string | null;
}

/** Why a step did not do what we asked, in fixed words the service gives a code: the store, and what happened. */
export type WriteBackFailure =
  | { reason: 'unreachable'; store: string; error: string }
  | { reason: 'answered'; store: string; status: number }
  | { reason: 'unreadable' | 'errors' | 'tagRefused'; store: string };

/** One request and how to read its answer: null when it did what we asked, else why not. */
export interface WriteBackStep {
  request: OutboundRequest;
  failure(result: DeliveryResult): WriteBackFailure | null;
}

/** Shopify's requests are built without the access token: the sender adds it (X-Shopify-Access-Token), refreshed as it expires. */
export interface ShopifyTarget {
  /** `https://atlas.myshopify.com`, or a test double's address. */
  origin: string;
  apiVersion: string;
}

export interface WooCommerceTarget {
  /** The site's address as the connection keeps it (`https://atlas.ma`). */
  shop: string;
  credentials: { consumer_key: string; consumer_secret: string; set_status?: boolean };
}

const TAGS_ADD = `mutation ConfirmationTag($id: ID!, $tags: [String!]!) {
  tagsAdd(id: $id, tags: $tags) { node { id } userErrors { field message } }
}`;

/** Why a request got no usable answer. */
function transportFailure(store: string, result: DeliveryResult): WriteBackFailure | null {
  if (result.delivered) return null;
  return result.status === null
    ? { reason: 'unreachable', store, error: result.error ?? 'connection failed' }
    : { reason: 'answered', store, status: result.status };
}

/**
 * Shopify: the tag `confirmation:{status}` on the order. GraphQL answers 200 even when nothing was
 * done: top-level `errors` (a bad token's scope, throttling) or the mutation's `userErrors` are failures.
 */
export function shopifySteps(target: ShopifyTarget, order: WriteBackOrder): WriteBackStep[] {
  return [
    {
      request: {
        method: 'POST',
        url: `${target.origin}/admin/api/${target.apiVersion}/graphql.json`,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: TAGS_ADD, variables: { id: `gid://shopify/Order/${order.externalId}`, tags: [`confirmation:${order.status}`] } }),
      },
      failure(result) {
        const failed = transportFailure('Shopify', result);
        if (failed) return failed;
        let answer: { errors?: unknown; data?: { tagsAdd?: { userErrors?: unknown[] } | null } };
        try {
          answer = JSON.parse(result.body);
        } catch {
          return { reason: 'unreadable', store: 'Shopify' };
        }
        if (Array.isArray(answer.errors) && answer.errors.length > 0) return { reason: 'errors', store: 'Shopify' };
        if (!answer.data?.tagsAdd) return { reason: 'unreadable', store: 'Shopify' };
        if ((answer.data.tagsAdd.userErrors ?? []).length > 0) return { reason: 'tagRefused', store: 'Shopify' };
        return null;
      },
    },
  ];
}

/**
 * A store's order id as one segment of a path: percent-encoded, and never `.` or `..`, which a URL
 * resolves as "this folder" and "the folder above" (`orders/../notes`); null for those.
 */
export function pathSegment(id: string): string | null {
  const segment = encodeURIComponent(id);
  return segment === '.' || segment === '..' || segment === '' ? null : segment;
}

/** WooCommerce: a private note with the outcome and the call's summary; the order's status when the connection asks for it. */
export function wooCommerceSteps(target: WooCommerceTarget, order: WriteBackOrder): WriteBackStep[] {
  const { consumer_key, consumer_secret, set_status } = target.credentials;
  // Basic authentication, which WooCommerce accepts over https only (the caller refuses plain http in production).
  const headers = {
    'content-type': 'application/json',
    authorization: `Basic ${Buffer.from(`${consumer_key}:${consumer_secret}`).toString('base64')}`,
  };
  const segment = pathSegment(order.externalId);
  if (segment === null) throw new Error('wooCommerceSteps: an order id of "." or ".." names no order');
  const orderUrl = `${target.shop}/wp-json/wc/v3/orders/${segment}`;
  const failure = (result: DeliveryResult) => transportFailure('WooCommerce', result);
  const note = `Confirmation call: ${order.status}.${order.summary ? `\nSummary: ${order.summary}` : ''}`;
  const steps: WriteBackStep[] = [
    { request: { method: 'POST', url: `${orderUrl}/notes`, headers, body: JSON.stringify({ note, customer_note: false }) }, failure },
  ];
  if (set_status) {
    const status = order.status === 'confirmed' ? 'processing' : 'cancelled';
    steps.push({ request: { method: 'PUT', url: orderUrl, headers, body: JSON.stringify({ status }) }, failure });
  }
  return steps;
}
