import crypto from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { Knex } from 'knex';
import { z } from 'zod';
import type { DeliveryResult, OutboundRequest, SignedSender } from '../../../integrations/http';
import { hmacMatches, parseStoreJson } from '../../../integrations/stores/types';
import { ConflictError, ownerOnly, ValidationError, isUuid, parse, requiredText, msg } from '../../shared';
import type { WorkspaceActor } from '../../shared';
import { MAX_CONNECTIONS } from '../connections';
import {
  fieldsOf,
  idOf,
  jsonOf,
  SHOPIFY_SHOP,
  SHOPIFY_TOPICS,
  shopifyAuthorizeUrl,
  shopifyHmacMatches,
  shopifySubscribe,
  shopifySubscriptionId,
  shopifyTokenRequest,
  shopifyUnsubscribe,
  WOOCOMMERCE_TOPICS,
  wooAuthorizeUrl,
  wooWebhookCreate,
  wooWebhookDelete,
  YOUCAN_EVENTS,
  youcanAuthorizeUrl,
  youcanSubscribe,
  youcanTokenRequest,
  youcanUnsubscribe,
} from './platforms';

/**
 * Connecting a store in one click (docs/stores.md): the owner approves our app on the platform and
 * comes back to a working connection; we choose every secret and register every webhook.
 *
 * Each approval under way is an `oauth_states` row: a single-use nonce (kept as its SHA-256), bound
 * to the owner's session, good for 10 minutes. A connection being set up is `pending` (disabled:
 * its intake answers 404) until its webhooks are registered; when anything fails, what was
 * registered is removed again and the connection deleted, and the owner is told why.
 */
export const CONNECT_KINDS = ['shopify', 'woocommerce', 'youcan'] as const;
export type ConnectKind = (typeof CONNECT_KINDS)[number];

/** Why a connection could not be made, as `/stores/new?connect_error=` names it (each one a sentence in the locales). */
export const CONNECT_ERRORS = ['refused', 'hmac', 'state', 'shop', 'platform', 'registration', 'keys', 'not_configured'] as const;
export type ConnectErrorCode = (typeof CONNECT_ERRORS)[number];

export class ConnectError extends Error {
  constructor(
    readonly code: ConnectErrorCode,
    readonly kind: ConnectKind,
  ) {
    super(`Store connection failed: ${code}`);
  }
}

export interface ConnectConfig {
  publicBaseUrl: string;
  isProduction: boolean;
  shopifyApp?: { clientId: string; clientSecret: string };
  youcanApp?: { clientId: string; clientSecret: string };
  shopifyApiOrigin?: string;
  shopifyApiVersion: string;
  youcanAdminOrigin?: string;
  youcanApiOrigin?: string;
}

const YOUCAN_ADMIN = 'https://seller-area.youcan.shop';
const YOUCAN_API = 'https://api.youcan.shop';

/** How long an approval may take, and how long a half-made connection may stay. */
const STATE_MINUTES = 10;
const PENDING_MINUTES = 60;
/** What WooCommerce shows the owner as the app asking for keys. */
const APP_NAME = 'Order Confirmation';

interface StateRow {
  kind: ConnectKind;
  workspace_id: string;
  connection_id: string | null;
  shop: string | null;
  name: string;
  cod_only: boolean;
}

const sha256 = (text: string) => crypto.createHash('sha256').update(text).digest('hex');

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

const wooKeys = z.object({
  key_id: z.union([z.number(), z.string()]).optional(),
  user_id: z.union([z.string(), z.number()]).transform(String),
  consumer_key: z.string().min(1).max(500),
  consumer_secret: z.string().min(1).max(500),
  key_permissions: z.string().optional(),
});

export class StoreConnectService {
  constructor(
    private readonly knex: Knex,
    private readonly sender: SignedSender,
    private readonly config: ConnectConfig,
  ) {}

  /** Which platforms connect in one click here: WooCommerce always; Shopify and YouCan with the operator's app. */
  available(): Record<ConnectKind, boolean> {
    return { shopify: !!this.config.shopifyApp, woocommerce: true, youcan: !!this.config.youcanApp };
  }

  private url(path: string): string {
    return `${this.config.publicBaseUrl}${path}`;
  }

  private shopifyOrigin(shop: string): string {
    return this.config.shopifyApiOrigin ?? `https://${shop}`;
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
                  secret: crypto.randomBytes(24).toString('base64url'),
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
      return shopifyAuthorizeUrl(this.shopifyOrigin(shop!), app.clientId, this.url('/stores/shopify/callback'), nonce);
    }
    if (input.kind === 'youcan')
      return youcanAuthorizeUrl(this.config.youcanAdminOrigin ?? YOUCAN_ADMIN, this.config.youcanApp!.clientId, this.url('/stores/youcan/callback'), nonce);
    return wooAuthorizeUrl(shop!, APP_NAME, nonce, this.url('/stores/woocommerce/return'), this.url(`/hooks/stores/${connectionId}/keys`));
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

  /** Takes the approval's state: once, from the session that started it, within 10 minutes. */
  private async takeState(kind: ConnectKind, sessionId: string, nonce: unknown): Promise<StateRow> {
    if (typeof nonce !== 'string' || nonce.length === 0 || nonce.length > 200) throw new ConnectError('state', kind);
    const [row] = await this.knex('oauth_states')
      .where({ nonce_hash: sha256(nonce), kind, session_hash: sha256(sessionId) })
      .where('created_at', '>', this.knex.raw(`now() - interval '${STATE_MINUTES} minutes'`))
      .delete(['kind', 'workspace_id', 'connection_id', 'shop', 'name', 'cod_only']);
    if (!row) throw new ConnectError('state', kind);
    return row;
  }

  private async send(request: OutboundRequest): Promise<DeliveryResult> {
    return this.sender.request(request);
  }

  /**
   * Shopify's callback (`code`, `hmac`, `shop`, `state`, `timestamp`, `host`): the hmac, the shop's
   * name and the state are checked before anything is sent; then the code becomes the access token,
   * and the six subscriptions are made. Answers the new connection's id.
   */
  async shopifyCallback(workspace: WorkspaceActor, sessionId: string, query: URLSearchParams): Promise<string> {
    const app = this.config.shopifyApp;
    if (!app) throw new ConnectError('not_configured', 'shopify');
    if (!shopifyHmacMatches(query, app.clientSecret)) throw new ConnectError('hmac', 'shopify');
    const shop = query.get('shop') ?? '';
    if (!SHOPIFY_SHOP.test(shop)) throw new ConnectError('shop', 'shopify');
    const state = await this.takeState('shopify', sessionId, query.get('state'));
    // The state names the shop the owner typed: a callback for another shop is not theirs.
    if (state.shop !== shop.toLowerCase() || state.workspace_id !== workspace.id) throw new ConnectError('shop', 'shopify');
    if (query.get('error') || !query.get('code')) throw new ConnectError('refused', 'shopify');
    const origin = this.shopifyOrigin(state.shop);
    const grant = await this.send(shopifyTokenRequest(origin, app, query.get('code')!));
    const token = idOf(jsonOf(grant.body).access_token);
    if (!grant.delivered || !token) throw new ConnectError('platform', 'shopify');
    const id = await this.pendingConnection(state, 'shopify', app.clientSecret);
    const made: string[] = [];
    try {
      for (const topic of SHOPIFY_TOPICS) {
        const answer = await this.send(shopifySubscribe(origin, this.config.shopifyApiVersion, token, topic, this.url(`/hooks/stores/${id}`)));
        const subscription = answer.delivered ? shopifySubscriptionId(answer.body) : null;
        if (!subscription) throw new ConnectError('registration', 'shopify');
        made.push(subscription);
      }
    } catch (err) {
      await Promise.all(made.map((sub) => this.send(shopifyUnsubscribe(origin, this.config.shopifyApiVersion, token, sub))));
      await this.discard(id);
      throw err;
    }
    await this.activate(id, { access_token: token });
    return id;
  }

  /** YouCan's callback (`code`, `state`, or `error` when the owner refused). */
  async youcanCallback(workspace: WorkspaceActor, sessionId: string, query: URLSearchParams): Promise<string> {
    const app = this.config.youcanApp;
    if (!app) throw new ConnectError('not_configured', 'youcan');
    const state = await this.takeState('youcan', sessionId, query.get('state'));
    if (state.workspace_id !== workspace.id) throw new ConnectError('state', 'youcan');
    if (query.get('error') || !query.get('code')) throw new ConnectError('refused', 'youcan');
    const api = this.config.youcanApiOrigin ?? YOUCAN_API;
    const grant = await this.send(youcanTokenRequest(api, app, this.url('/stores/youcan/callback'), query.get('code')!));
    const token = idOf(jsonOf(grant.body).access_token);
    if (!grant.delivered || !token) throw new ConnectError('platform', 'youcan');
    const id = await this.pendingConnection(state, 'youcan', app.clientSecret);
    const made: string[] = [];
    try {
      for (const event of YOUCAN_EVENTS) {
        const answer = await this.send(youcanSubscribe(api, token, event, this.url(`/hooks/stores/${id}`)));
        // order.update is taken where YouCan offers it: a refusal of it alone (4xx) is not a failure.
        if (!answer.delivered && event === 'order.update' && answer.status !== null && answer.status >= 400 && answer.status < 500) continue;
        const subscription = answer.delivered ? idOf(jsonOf(answer.body).id) : null;
        if (!subscription) throw new ConnectError('registration', 'youcan');
        made.push(subscription);
      }
    } catch (err) {
      await Promise.all(made.map((sub) => this.send(youcanUnsubscribe(api, token, sub))));
      await this.discard(id);
      throw err;
    }
    await this.activate(id, null);
    return id;
  }

  /**
   * WooCommerce's server posts the keys here (no session: the `user_id` nonce is the only key).
   * Accepted once, for a live nonce naming this pending connection; kept on it until the owner is back.
   */
  async wooKeys(connectionId: string, raw: Buffer): Promise<boolean> {
    if (!isUuid(connectionId)) return false;
    let body: z.infer<typeof wooKeys>;
    try {
      body = wooKeys.parse(JSON.parse(raw.toString('utf8')));
    } catch {
      return false;
    }
    const keys = JSON.stringify({ consumer_key: body.consumer_key, consumer_secret: body.consumer_secret });
    const updated = await this.knex('store_connections as c')
      .where({ 'c.id': connectionId, 'c.pending': true, 'c.kind': 'woocommerce' })
      .whereNull('c.write_back')
      .whereExists(
        this.knex('oauth_states as s')
          .where({ 's.connection_id': connectionId, 's.nonce_hash': sha256(body.user_id) })
          .where('s.created_at', '>', this.knex.raw(`now() - interval '${STATE_MINUTES} minutes'`)),
      )
      .update({ write_back: keys });
    return updated === 1;
  }

  /**
   * The owner back from WooCommerce (`success`, `user_id`): with the keys received, the three webhooks
   * are made with our secret; a refusal, missing keys or a failure leave nothing.
   */
  async wooReturn(workspace: WorkspaceActor, sessionId: string, query: URLSearchParams): Promise<string> {
    const state = await this.takeState('woocommerce', sessionId, query.get('user_id'));
    const id = state.connection_id;
    if (!id || state.workspace_id !== workspace.id) throw new ConnectError('state', 'woocommerce');
    const connection = await this.knex('store_connections').where({ id, pending: true }).first('shop', 'secret', 'write_back');
    if (!connection) throw new ConnectError('state', 'woocommerce');
    if (query.get('success') !== '1') {
      await this.discard(id);
      throw new ConnectError('refused', 'woocommerce');
    }
    const keys = connection.write_back as { consumer_key: string; consumer_secret: string } | null;
    if (!keys) {
      await this.discard(id);
      throw new ConnectError('keys', 'woocommerce');
    }
    const made: string[] = [];
    try {
      for (const topic of WOOCOMMERCE_TOPICS) {
        const answer = await this.send(
          wooWebhookCreate(connection.shop, keys, {
            name: `${APP_NAME}: ${topic}`,
            topic,
            deliveryUrl: this.url(`/hooks/stores/${id}`),
            secret: connection.secret,
          }),
        );
        const webhook = answer.delivered ? idOf(jsonOf(answer.body).id) : null;
        if (!webhook) throw new ConnectError('registration', 'woocommerce');
        made.push(webhook);
      }
    } catch (err) {
      await Promise.all(made.map((webhook) => this.send(wooWebhookDelete(connection.shop, keys, webhook))));
      await this.discard(id);
      throw err;
    }
    await this.activate(id, { ...keys, set_status: false });
    return id;
  }

  /** The connection of a Shopify or YouCan approval, pending until its webhooks are made; signed with the app's client secret. */
  private async pendingConnection(state: StateRow, kind: 'shopify' | 'youcan', secret: string): Promise<string> {
    const [row] = await this.knex('store_connections')
      .insert({
        workspace_id: state.workspace_id,
        kind,
        name: state.name,
        shop: state.shop,
        secret,
        cod_only: state.cod_only,
        enabled: false,
        pending: true,
        connected_by: 'oauth',
      })
      .returning('id');
    return row.id;
  }

  private async activate(id: string, writeBack: Record<string, unknown> | null): Promise<void> {
    await this.knex('store_connections')
      .where({ id })
      .update({ pending: false, enabled: true, write_back: writeBack ? JSON.stringify(writeBack) : null, write_back_error: null });
  }

  private async discard(id: string): Promise<void> {
    await this.knex('store_connections').where({ id, pending: true }).delete();
  }

  /**
   * Shopify's privacy topics, signed with the app's client secret (X-Shopify-Hmac-Sha256):
   * `customers/data_request` is answered (we keep nothing beyond the orders the shop sees in its own
   * admin), `customers/redact` deletes that customer's orders of the shop's connections, and
   * `shop/redact` deletes the shop's connections and their orders. 401 when the signature is wrong.
   */
  async shopifyPrivacy(raw: Buffer, headers: IncomingHttpHeaders): Promise<200 | 400 | 401 | 404> {
    const app = this.config.shopifyApp;
    if (!app) return 404;
    const signature = headers['x-shopify-hmac-sha256'];
    if (!hmacMatches(raw, app.clientSecret, typeof signature === 'string' ? signature : undefined, 'base64')) return 401;
    let body: Record<string, unknown>;
    try {
      // Ids as the text Shopify wrote: they exceed 2^53.
      body = fieldsOf(parseStoreJson(raw));
    } catch {
      return 400;
    }
    const shop = typeof body.shop_domain === 'string' ? body.shop_domain.toLowerCase() : '';
    if (!SHOPIFY_SHOP.test(shop)) return 400;
    const topic = headers['x-shopify-topic'];
    const connections = this.knex('store_connections').where({ kind: 'shopify', shop }).select('id');
    if (topic === 'customers/redact') {
      const named = (Array.isArray(body.orders_to_redact) ? body.orders_to_redact : []).map(idOf).filter((id): id is string => !!id && id.length <= 200);
      if (named.length > 0) await this.knex('orders').whereIn('store_connection_id', connections).whereIn('external_id', named).delete();
    } else if (topic === 'shop/redact') {
      await this.knex.transaction(async (trx) => {
        const ids = (await trx('store_connections').where({ kind: 'shopify', shop }).select('id')).map((row) => row.id);
        if (ids.length === 0) return;
        await trx('orders').whereIn('store_connection_id', ids).delete();
        await trx('store_connections').whereIn('id', ids).delete();
      });
    } else if (topic !== 'customers/data_request') return 400;
    return 200;
  }

  /** Approvals past their 10 minutes, and connections left pending over an hour. */
  async prune(): Promise<number> {
    const states = await this.knex('oauth_states')
      .where('created_at', '<', this.knex.raw(`now() - interval '${STATE_MINUTES} minutes'`))
      .delete();
    const pending = await this.knex('store_connections')
      .where({ pending: true })
      .where('created_at', '<', this.knex.raw(`now() - interval '${PENDING_MINUTES} minutes'`))
      .delete();
    return states + pending;
  }
}
