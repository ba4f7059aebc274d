/**
 * Shopify's Admin API with an expiring offline token (PITFALLS, "Shopify's expiring offline
 * tokens"): an access token lasts an hour; a refresh answers a new access token AND a new refresh
 * token. Every Admin API call of a connection goes through `ShopifyAdmin.send`, which refreshes first
 * when under 5 minutes remain, and once more when Shopify answers 401; the new tokens are stored
 * together, in the transaction that holds the connection's row lock, so that two workers refreshing
 * at once make one refresh and both use its token.
 *
 * The tokens are kept in `store_connections.write_back` (jsonb), sealed with SECRETS_KEY:
 * `{access_token, expires_at, refresh_token, refresh_token_expires_at}`. A row written before holds a
 * plain `access_token` and no expiry (a non-expiring token): it is used as it is.
 */
import type { Knex } from 'knex';
import type { DeliveryResult, OutboundRequest } from '../../../../integrations/http';
import type { Secrets } from '../../../../integrations/secrets';
import type { ShopifyGrant } from './api';
import { shopifyGrant, shopifyRefreshRequest } from './api';

/** A token with less than this left is refreshed before it is used. */
const REFRESH_MARGIN_MS = 5 * 60 * 1000;
/** Non-expiring offline tokens of public apps are refused from this day on. */
export const NON_EXPIRING_UNTIL = '2027-01-01';

/** A Shopify connection's `write_back` as stored. */
export interface StoredShopifyCredentials {
  access_token: string;
  /** When the access token expires (ISO); absent for a non-expiring token. */
  expires_at?: string;
  refresh_token?: string;
  refresh_token_expires_at?: string;
}

/** The credentials to store for a grant of Shopify's token endpoint: the tokens sealed, their expiries as instants. */
export function sealGrant(secrets: Secrets, grant: ShopifyGrant, now = Date.now()): StoredShopifyCredentials {
  const stored: StoredShopifyCredentials = { access_token: secrets.seal(grant.accessToken) };
  if (grant.expiresIn !== null) stored.expires_at = new Date(now + grant.expiresIn * 1000).toISOString();
  if (grant.refreshToken !== null) stored.refresh_token = secrets.seal(grant.refreshToken);
  if (grant.refreshTokenExpiresIn !== null) stored.refresh_token_expires_at = new Date(now + grant.refreshTokenExpiresIn * 1000).toISOString();
  return stored;
}

/** Whether stored credentials hold a non-expiring token (no expiry kept). */
export function nonExpiring(stored: unknown): boolean {
  return !!stored && typeof stored === 'object' && 'access_token' in stored && !('expires_at' in stored);
}

interface Opened {
  accessToken: string;
  expiresAt: number | null;
  refreshToken: string | null;
}

function open(secrets: Secrets, stored: StoredShopifyCredentials): Opened {
  return {
    accessToken: secrets.open(stored.access_token),
    expiresAt: stored.expires_at ? Date.parse(stored.expires_at) : null,
    refreshToken: stored.refresh_token ? secrets.open(stored.refresh_token) : null,
  };
}

/** Good for more than the margin (a non-expiring token always is). */
const fresh = (token: Opened, now = Date.now()) => token.expiresAt === null || token.expiresAt - now > REFRESH_MARGIN_MS;

/**
 * What became of an Admin API call: Shopify's answer (after at most one refresh); or no call, because
 * the connection needs the owner to reconnect (a refresh refused, now or before), or because the
 * refresh could not be had now (Shopify unreachable, a 5xx or 429: try again later), or because the
 * connection has no token any more.
 */
export type AdminAnswer = { sent: DeliveryResult } | { reconnect: true } | { refreshFailed: DeliveryResult | null } | { noToken: true };

type Send = (request: OutboundRequest) => Promise<DeliveryResult>;
type Refreshed = { token: string } | { reconnect: true } | { refreshFailed: DeliveryResult | null } | { noToken: true };

export interface ShopifyAdminSettings {
  /** The app whose client id and secret refresh the tokens; unset: nothing can be refreshed. */
  app?: { clientId: string; clientSecret: string };
  /** A test double in place of `https://{shop}`. */
  apiOrigin?: string;
}

export class ShopifyAdmin {
  constructor(
    private readonly knex: Knex,
    private readonly secrets: Secrets,
    private readonly settings: ShopifyAdminSettings,
  ) {}

  private origin(shop: string): string {
    return this.settings.apiOrigin ?? `https://${shop}`;
  }

  /**
   * `request` sent with the connection's access token (X-Shopify-Access-Token): refreshed first when
   * under 5 minutes remain, and once more when Shopify answers 401.
   */
  async send(connectionId: string, request: OutboundRequest, send: Send): Promise<AdminAnswer> {
    const row = await this.knex('store_connections').where({ id: connectionId }).first('write_back', 'reconnect_needed');
    if (!row?.write_back?.access_token) return { noToken: true };
    if (row.reconnect_needed) return { reconnect: true };
    let token = open(this.secrets, row.write_back).accessToken;
    if (!fresh(open(this.secrets, row.write_back))) {
      const refreshed = await this.refresh(connectionId, token, send);
      if (!('token' in refreshed)) return refreshed;
      token = refreshed.token;
    }
    const answer = await send(withToken(request, token));
    if (answer.status !== 401 || !row.write_back.refresh_token) return { sent: answer };
    // Revoked or expired early: one refresh, one more try.
    const refreshed = await this.refresh(connectionId, token, send);
    if (!('token' in refreshed)) return refreshed;
    return { sent: await send(withToken(request, refreshed.token)) };
  }

  /**
   * A new access token in place of `stale`, one refresh per connection at a time: under the
   * connection's row lock, the stored token is read again, and one another worker stored meanwhile
   * is used as it is. The new access and refresh tokens are stored in that same transaction. A
   * refresh Shopify refuses (a 4xx: the refresh token expired or was revoked) marks the connection
   * `reconnect_needed`.
   */
  private async refresh(connectionId: string, stale: string, send: Send): Promise<Refreshed> {
    return this.knex.transaction(async (trx) => {
      const row = await trx('store_connections').where({ id: connectionId }).forUpdate().first('shop', 'write_back', 'reconnect_needed');
      if (!row?.write_back?.access_token || !row.shop) return { noToken: true };
      if (row.reconnect_needed) return { reconnect: true };
      const current = open(this.secrets, row.write_back);
      if (current.accessToken !== stale && fresh(current)) return { token: current.accessToken };
      const app = this.settings.app;
      if (!current.refreshToken || !app) return { refreshFailed: null };
      const answer = await send(shopifyRefreshRequest(this.origin(row.shop), app, current.refreshToken));
      const grant = answer.delivered ? shopifyGrant(answer.body) : null;
      if (grant?.refreshToken) {
        const stored = sealGrant(this.secrets, grant);
        await trx('store_connections')
          .where({ id: connectionId })
          .update({ write_back: JSON.stringify(stored) });
        return { token: grant.accessToken };
      }
      if (answer.status !== null && answer.status >= 400 && answer.status < 500 && answer.status !== 408 && answer.status !== 429) {
        await trx('store_connections').where({ id: connectionId }).update({ reconnect_needed: true });
        return { reconnect: true };
      }
      return { refreshFailed: answer };
    });
  }
}

function withToken(request: OutboundRequest, token: string): OutboundRequest {
  return { ...request, headers: { ...request.headers, 'x-shopify-access-token': token } };
}
