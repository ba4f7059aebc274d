import type { OutboundRequest } from '../../../../integrations/http';

/** WooCommerce's approval address and webhook API as plain requests (the site's address is given). */

export const WOOCOMMERCE_TOPICS = ['order.created', 'order.updated', 'order.deleted'] as const;

export function wooAuthorizeUrl(site: string, appName: string, nonce: string, returnUrl: string, callbackUrl: string): string {
  const query = new URLSearchParams({ app_name: appName, scope: 'read_write', user_id: nonce, return_url: returnUrl, callback_url: callbackUrl });
  return `${site}/wc-auth/v1/authorize?${query}`;
}

function basic(keys: { consumer_key: string; consumer_secret: string }): string {
  return `Basic ${Buffer.from(`${keys.consumer_key}:${keys.consumer_secret}`).toString('base64')}`;
}

export function wooWebhookCreate(
  site: string,
  keys: { consumer_key: string; consumer_secret: string },
  webhook: { name: string; topic: string; deliveryUrl: string; secret: string },
): OutboundRequest {
  return {
    method: 'POST',
    url: `${site}/wp-json/wc/v3/webhooks`,
    headers: { 'content-type': 'application/json', authorization: basic(keys) },
    body: JSON.stringify({ name: webhook.name, topic: webhook.topic, delivery_url: webhook.deliveryUrl, secret: webhook.secret, status: 'active' }),
  };
}

export function wooWebhookDelete(site: string, keys: { consumer_key: string; consumer_secret: string }, id: string): OutboundRequest {
  return {
    method: 'DELETE',
    url: `${site}/wp-json/wc/v3/webhooks/${encodeURIComponent(id)}?force=true`,
    headers: { authorization: basic(keys) },
    body: '',
  };
}
