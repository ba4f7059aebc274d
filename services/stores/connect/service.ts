/**
 * Connecting a store in one click (docs/stores.md): the owner approves our app on the platform and
 * comes back to a working connection; we choose every secret and register every webhook.
 *
 * Each approval under way is an `oauth_states` row: a single-use nonce (kept as its SHA-256), bound
 * to the owner's session, good for 10 minutes. A connection being set up is `pending` (disabled:
 * its intake answers 404) until its webhooks are registered; when anything fails, what was
 * registered is removed again and the connection deleted, and the owner is told why. This file holds
 * the service and its first step; each platform's steps are in its folder (`platforms/<kind>/connect.ts`),
 * and the owner's return from each is the service's method the platform names (`connect.step`).
 */
import crypto from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { Knex } from 'knex';
import { z } from 'zod';
import type { SignedSender } from '../../../integrations/http';
import type { Secrets } from '../../../integrations/secrets';
import { ConflictError, isUuid, NotFoundError, ownerOnly, parse, requiredText, msg } from '../../../services/shared';
import type { WorkspaceActor } from '../../../services/shared';
import { MAX_CONNECTIONS } from '../connections';
import { pruneApprovals, sha256 } from './approvals';
import type { ConnectConfig, Connector } from './connector';
import { ConnectError } from './connector';
import { shopifyPrivacy } from '../platforms/shopify/connect';
import { wooKeys } from '../platforms/woocommerce/connect';
import type { ConnectKind, ConnectSteps } from '../platforms/registry';
import { CONNECT_KINDS, CONNECT_PLATFORMS } from '../platforms/registry';

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

/** The platform of a kind the schema took. */
const platformOf = (kind: ConnectKind) => CONNECT_PLATFORMS.find((platform) => platform.kind === kind)!;

class ConnectService {
  /** What each platform's steps use. */
  private readonly connector: Connector;

  constructor(
    private readonly knex: Knex,
    private readonly sender: SignedSender,
    private readonly config: ConnectConfig,
    secrets: Secrets,
  ) {
    this.connector = { knex, config, send: (request) => this.sender.request(request), url: (path) => this.url(path), secrets };
    for (const platform of CONNECT_PLATFORMS)
      Object.assign(this, {
        [platform.connect.step]: (workspace: WorkspaceActor, sessionId: string, query: URLSearchParams) =>
          this.finish(platform.kind, workspace, sessionId, query),
      });
  }

  /** Which platforms connect in one click here (the operator set up their app, where they need one). */
  available(): Record<ConnectKind, boolean> {
    return Object.fromEntries(CONNECT_PLATFORMS.map((platform) => [platform.kind, platform.connect.available(this.config)])) as Record<ConnectKind, boolean>;
  }

  /** The owner back from a platform's approval, at `/stores/<kind>/<back>`: the new connection's id. */
  finish(kind: ConnectKind, workspace: WorkspaceActor, sessionId: string, query: URLSearchParams): Promise<string> {
    return platformOf(kind).connect.finish(this.connector, workspace, sessionId, query);
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
    const platform = platformOf(input.kind);
    if (!platform.connect.available(this.config)) throw new ConnectError('not_configured', input.kind);
    const shop = 'address' in platform ? platform.address.oneClick(input.shop, this.config.isProduction) : null;
    const nonce = crypto.randomBytes(32).toString('base64url');
    const connectionId = await this.knex.transaction(async (trx) => {
      await trx('workspaces').where({ id: workspace.id }).forUpdate().first('id');
      const [{ n }] = await trx('store_connections').where({ workspace_id: workspace.id }).count({ n: '*' });
      if (Number(n) >= MAX_CONNECTIONS) throw new ConflictError(msg('tooManyStores', { max: MAX_CONNECTIONS }), 'TOO_MANY_STORES');
      const id = platform.connect.connectionFirst
        ? (
            await trx('store_connections')
              .insert({
                workspace_id: workspace.id,
                kind: input.kind,
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
    return platform.connect.approvalUrl(this.connector, { shop, nonce, connectionId });
  }

  /**
   * Reconnect: the platform's approval again for a connection's own shop (a platform that
   * `reconnects`: Shopify, when it no longer renews the token or it is a non-expiring one). The
   * callback replaces the tokens of that same connection (its id, orders and webhooks stay).
   * Answers where to send the owner's browser, and the connection's kind.
   */
  async reconnect(workspace: WorkspaceActor, sessionId: string, connectionId: string): Promise<{ url: string; kind: ConnectKind }> {
    ownerOnly(workspace);
    const reconnecting = CONNECT_PLATFORMS.filter((platform) => 'reconnects' in platform.connect && platform.connect.reconnects);
    const connection = isUuid(connectionId)
      ? await this.knex('store_connections')
          .where({ id: connectionId, workspace_id: workspace.id, connected_by: 'oauth', pending: false })
          .whereIn(
            'kind',
            reconnecting.map((platform) => platform.kind),
          )
          .first('id', 'kind', 'shop', 'name', 'cod_only')
      : undefined;
    if (!connection?.shop) throw new NotFoundError(msg('storeNotFound'));
    const platform = reconnecting.find((one) => one.kind === connection.kind)!;
    if (!platform.connect.available(this.config)) throw Object.assign(new ConnectError('not_configured', platform.kind), { reconnecting: connection.id });
    const nonce = crypto.randomBytes(32).toString('base64url');
    await this.knex('oauth_states').insert({
      nonce_hash: sha256(nonce),
      kind: platform.kind,
      workspace_id: workspace.id,
      session_hash: sha256(sessionId),
      connection_id: connection.id,
      shop: connection.shop,
      name: connection.name,
      cod_only: connection.cod_only,
    });
    return { url: platform.connect.approvalUrl(this.connector, { shop: connection.shop, nonce, connectionId: null }), kind: platform.kind };
  }

  /** WooCommerce's server posts the keys here (no session: the `user_id` nonce is the only key); see `platforms/woocommerce/connect.ts`. */
  async wooKeys(connectionId: string, raw: Buffer): Promise<boolean> {
    return wooKeys(this.connector, connectionId, raw);
  }

  /** Shopify's privacy topics, signed with the app's client secret; see `platforms/shopify/connect.ts`. */
  async shopifyPrivacy(raw: Buffer, headers: IncomingHttpHeaders): Promise<200 | 400 | 401 | 404> {
    return shopifyPrivacy(this.connector, raw, headers);
  }

  /** Approvals past their 10 minutes, and connections left pending over an hour. */
  async prune(): Promise<number> {
    return pruneApprovals(this.knex);
  }
}

/** The service with each platform's return step by its name (`StoreConnectService.wooReturn`), read from the registry. */
export type StoreConnectService = ConnectService & ConnectSteps;
export const StoreConnectService = ConnectService as new (...args: ConstructorParameters<typeof ConnectService>) => StoreConnectService;
