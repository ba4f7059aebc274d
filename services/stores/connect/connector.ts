/**
 * What connecting a store in one click works with: the platforms it knows, the operator's
 * configuration, why a connection fails (the owner is told), and the Connector each platform's
 * steps receive from StoreConnectService.
 */
import type { Knex } from 'knex';
import type { DeliveryResult, OutboundRequest } from '../../../integrations/http';
import type { Secrets } from '../../../integrations/secrets';

export const CONNECT_KINDS = ['shopify', 'woocommerce', 'youcan'] as const;
export type ConnectKind = (typeof CONNECT_KINDS)[number];

/** Why a connection could not be made, as `/stores/new?connect_error=` names it (each one a sentence in the locales). */
export const CONNECT_ERRORS = ['refused', 'hmac', 'state', 'shop', 'platform', 'registration', 'keys', 'not_configured'] as const;
export type ConnectErrorCode = (typeof CONNECT_ERRORS)[number];

export class ConnectError extends Error {
  /** What the owner typed on the form, once the approval's state names it: the form shows it again. */
  typed?: { name: string; shop: string | null };
  /** The connection being reconnected, when the approval was a Reconnect: the owner goes back to its page. */
  reconnecting?: string;

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

/** YouCan's addresses, unless the configuration names others (tests point them at doubles). */
export const YOUCAN_ADMIN = 'https://seller-area.youcan.shop';
export const YOUCAN_API = 'https://api.youcan.shop';

/** What a platform's steps use: the database, the configuration, the outbound guard, and our public addresses. */
export interface Connector {
  knex: Knex;
  config: ConnectConfig;
  /** A request through the outbound guard (SignedSender.request). */
  send(request: OutboundRequest): Promise<DeliveryResult>;
  /** Our public address of `path`. */
  url(path: string): string;
  /** Seals the tokens before they are stored. */
  secrets: Secrets;
}
