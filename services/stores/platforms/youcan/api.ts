import type { OutboundRequest } from '../../../../integrations/http';

/** YouCan's approval flow and webhook API as plain requests: every origin is given (a setting), so tests point them at doubles. */

/** YouCan's addresses, unless the configuration names others. */
export const YOUCAN_ADMIN = 'https://seller-area.youcan.shop';
export const YOUCAN_API = 'https://api.youcan.shop';

/** YouCan's events: order.create always; order.update where the platform offers it. */
export const YOUCAN_EVENTS = ['order.create', 'order.update'] as const;

export function youcanAuthorizeUrl(adminOrigin: string, clientId: string, redirectUri: string, state: string): string {
  const query = new URLSearchParams({ client_id: clientId, redirect_uri: redirectUri, response_type: 'code', 'scope[]': '*', state });
  return `${adminOrigin}/admin/oauth/authorize?${query}`;
}

/** YouCan's token endpoint takes a form body, not JSON. */
export function youcanTokenRequest(apiOrigin: string, app: { clientId: string; clientSecret: string }, redirectUri: string, code: string): OutboundRequest {
  const form = new URLSearchParams({
    grant_type: 'authorization_code',
    client_id: app.clientId,
    client_secret: app.clientSecret,
    redirect_uri: redirectUri,
    code,
  });
  return {
    method: 'POST',
    url: `${apiOrigin}/oauth/token`,
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: form.toString(),
  };
}

export function youcanSubscribe(apiOrigin: string, token: string, event: string, targetUrl: string): OutboundRequest {
  return {
    method: 'POST',
    url: `${apiOrigin}/resthooks/subscribe`,
    headers: { 'content-type': 'application/json', accept: 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ target_url: targetUrl, event }),
  };
}

export function youcanUnsubscribe(apiOrigin: string, token: string, id: string): OutboundRequest {
  return {
    method: 'DELETE',
    url: `${apiOrigin}/resthooks/unsubscribe/${encodeURIComponent(id)}`,
    headers: { accept: 'application/json', authorization: `Bearer ${token}` },
    body: '',
  };
}
