/**
 * Connecting a store in one click (docs/stores.md): the owner approves our app on the platform and
 * comes back to a working connection; we choose every secret and register every webhook.
 *
 * Each approval under way is an `oauth_states` row: a single-use nonce (kept as its SHA-256), bound
 * to the owner's session, good for 10 minutes. A connection being set up is `pending` (disabled:
 * its intake answers 404) until its webhooks are registered; when anything fails, what was
 * registered is removed again and the connection deleted, and the owner is told why. This file holds
 * the service and its first step; each platform's steps are in shopify.ts, youcan.ts and woocommerce.ts.
 */
import crypto from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { Knex } from 'knex';
import { z } from 'zod';
import type { SignedSender } from '../../../integrations/http';
import type { Secrets } from '../../../integrations/secrets';
import { ConflictError, isUuid, NotFoundError, ownerOnly, ValidationError, parse, requiredText, msg } from '../../../services/shared';
import type { WorkspaceActor } from '../../../services/shared';
import { MAX_CONNECTIONS } from '../connections';
import { pruneApprovals, sha256 } from './approvals';
import type { ConnectConfig, ConnectKind, Connector } from './connector';
import { CONNECT_KINDS, ConnectError, YOUCAN_ADMIN } from './connector';
import { SHOPIFY_SHOP, shopifyAuthorizeUrl, wooAuthorizeUrl, youcanAuthorizeUrl } from './platforms';
import { shopifyCallback, shopifyOrigin, shopifyPrivacy } from './shopify';
import { APP_NAME, wooKeys, wooReturn } from './woocommerce';
import { youcanCallback } from './youcan';

const startSchema = z.object({
  kind: z.enum(CONNECT_KINDS, { error: msg('oneOf', { label: 'kind', allowed: CONNECT_KINDS.join(', ') }) }),
  name: requiredText('name', 120),
  shop: z
    .string({ error: msg('notText', { label: 'shop' }) })
    .trim()
    .max(300, msg('tooLong', { label: 'shop', max: 300 }))
    .optional(),
  cod_only: z.boolean().optional(),
});

export class StoreConnectService {
  /** What each platform's steps use. */
  private readonly connector: Connector;

  constructor(
    private readonly knex: Knex,
    private readonly sender: SignedSender,
    private readonly config: ConnectConfig,
    secrets: Secrets,
  ) {
    this.connector = { knex, config, send: (request) => this.sender.request(request), url: (path) => this.url(path), secrets };
  }

  /** Which platforms connect in one click here: WooCommerce always; Shopify and YouCan with the operator's app. */
  available(): Record<ConnectKind, boolean> {
    return { shopify: !!this.config.shopifyApp, woocommerce: true, youcan: !!this.config.youcanApp };
  }

  private url(path: string): string {
    return `${this.config.publicBaseUrl}${path}`;
  }

  /**
   * The first step: checks the owner's form and answers where to send their browser to approve.
   * Field errors are a ValidationError (the form shows them); too many connections a ConflictError.
   */
  async start(workspace: WorkspaceActor, sessionId: string, body: unknown): Promise<string> {
    ownerOnly(workspace);
    const input = parse(startSchema, body);
    if (!this.available()[input.kind]) throw new ConnectError('not_configured', input.kind);
    const shop = this.shopOf(input.kind, input.shop);
    const nonce = crypto.randomBytes(32).toString('base64url');
    const connectionId = await this.knex.transaction(async (trx) => {
      await trx('workspaces').where({ id: workspace.id }).forUpdate().first('id');
      const [{ n }] = await trx('store_connections').where({ workspace_id: workspace.id }).count({ n: '*' });
      if (Number(n) >= MAX_CONNECTIONS) throw new ConflictError(msg('tooManyStores', { max: MAX_CONNECTIONS }), 'TOO_MANY_STORES');
      // WooCommerce posts the keys to an address naming the connection: it exists, pending, from now.
      const id =
        input.kind === 'woocommerce'
          ? (
              await trx('store_connections')
                .insert({
                  workspace_id: workspace.id,
                  kind: 'woocommerce',
                  name: input.name,
                  shop,
                  secret: this.connector.secrets.seal(crypto.randomBytes(24).toString('base64url')),
                  cod_only: input.cod_only ?? true,
                  enabled: false,
                  pending: true,
                  connected_by: 'oauth',
                })
                .returning('id')
            )[0].id
          : null;
      await trx('oauth_states').insert({
        nonce_hash: sha256(nonce),
        kind: input.kind,
        workspace_id: workspace.id,
        session_hash: sha256(sessionId),
        connection_id: id,
        shop,
        name: input.name,
        cod_only: input.cod_only ?? true,
      });
      return id as string | null;
    });
    if (input.kind === 'shopify') {
      const app = this.config.shopifyApp!;
      return shopifyAuthorizeUrl(shopifyOrigin(this.config, shop!), app.clientId, this.url('/stores/shopify/callback'), nonce);
    }
    if (input.kind === 'youcan')
      return youcanAuthorizeUrl(this.config.youcanAdminOrigin ?? YOUCAN_ADMIN, this.config.youcanApp!.clientId, this.url('/stores/youcan/callback'), nonce);
    return wooAuthorizeUrl(shop!, APP_NAME, nonce, this.url('/stores/woocommerce/return'), this.url(`/hooks/stores/${connectionId}/keys`));
  }

  /**
   * Reconnect: the Shopify approval again for a connection's own shop, when Shopify no longer renews
   * its token or it holds a non-expiring one. The callback replaces the tokens of that same
   * connection (its id, orders and webhooks stay). Answers where to send the owner's browser.
   */
  async reconnect(workspace: WorkspaceActor, sessionId: string, connectionId: string): Promise<string> {
    ownerOnly(workspace);
    const connection = isUuid(connectionId)
      ? await this.knex('store_connections')
          .where({ id: connectionId, workspace_id: workspace.id, kind: 'shopify', connected_by: 'oauth', pending: false })
          .first('id', 'shop', 'name', 'cod_only')
      : undefined;
    if (!connection?.shop) throw new NotFoundError(msg('storeNotFound'));
    const app = this.config.shopifyApp;
    if (!app) throw Object.assign(new ConnectError('not_configured', 'shopify'), { reconnecting: connection.id });
    const nonce = crypto.randomBytes(32).toString('base64url');
    await this.knex('oauth_states').insert({
      nonce_hash: sha256(nonce),
      kind: 'shopify',
      workspace_id: workspace.id,
      session_hash: sha256(sessionId),
      connection_id: connection.id,
      shop: connection.shop,
      name: connection.name,
      cod_only: connection.cod_only,
    });
    return shopifyAuthorizeUrl(shopifyOrigin(this.config, connection.shop), app.clientId, this.url('/stores/shopify/callback'), nonce);
  }

  /** The shop's address as the form gives it: a myshopify.com name, or a WooCommerce site (https in production). */
  private shopOf(kind: ConnectKind, given: string | undefined): string | null {
    if (kind === 'youcan') return null;
    const shop = (given ?? '').trim();
    if (kind === 'shopify') {
      const name = shop
        .toLowerCase()
        .replace(/^https?:\/\//, '')
        .replace(/\/.*$/, '');
      if (!SHOPIFY_SHOP.test(name) || name.length > 100) throw new ValidationError({ shop: msg('shopifyShop', { label: 'shop' }) });
      return name;
    }
    let url: URL;
    try {
      url = new URL(shop);
    } catch {
      throw new ValidationError({ shop: msg('siteAddress', { label: 'shop' }) });
    }
    if (url.protocol !== 'https:' && (this.config.isProduction || url.protocol !== 'http:'))
      throw new ValidationError({ shop: msg('siteHttps', { label: 'shop' }) });
    return `${url.origin}${url.pathname}`.replace(/\/+$/, '');
  }

  /** Shopify's callback: checked before anything is sent, then the token and the subscriptions; the new connection's id (see shopify.ts). */
  async shopifyCallback(workspace: WorkspaceActor, sessionId: string, query: URLSearchParams): Promise<string> {
    return shopifyCallback(this.connector, workspace, sessionId, query);
  }

  /** YouCan's callback (`code`, `state`, or `error` when the owner refused); see youcan.ts. */
  async youcanCallback(workspace: WorkspaceActor, sessionId: string, query: URLSearchParams): Promise<string> {
    return youcanCallback(this.connector, workspace, sessionId, query);
  }

  /** WooCommerce's server posts the keys here (no session: the `user_id` nonce is the only key); see woocommerce.ts. */
  async wooKeys(connectionId: string, raw: Buffer): Promise<boolean> {
    return wooKeys(this.connector, connectionId, raw);
  }

  /** The owner back from WooCommerce (`success`, `user_id`); see woocommerce.ts. */
  async wooReturn(workspace: WorkspaceActor, sessionId: string, query: URLSearchParams): Promise<string> {
    return wooReturn(this.connector, workspace, sessionId, query);
  }

  /** Shopify's privacy topics, signed with the app's client secret; see shopify.ts. */
  async shopifyPrivacy(raw: Buffer, headers: IncomingHttpHeaders): Promise<200 | 400 | 401 | 404> {
    return shopifyPrivacy(this.connector, raw, headers);
  }

  /** Approvals past their 10 minutes, and connections left pending over an hour. */
  async prune(): Promise<number> {
    return pruneApprovals(this.knex);
  }
}
