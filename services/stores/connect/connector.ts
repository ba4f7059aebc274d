/**
 * What connecting a store in one click works with: the operator's configuration, why a connection
 * fails (the owner is told), and the Connector each platform's steps receive from StoreConnectService.
 */
import type { Knex } from 'knex';
import type { Config } from '../../../config';
import type { DeliveryResult, OutboundRequest } from '../../../integrations/http';
import type { Secrets } from '../../../integrations/secrets';

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
    /** The platform's kind (`platforms/registry.ts`). */
    readonly kind: string,
  ) {
    super(`Store connection failed: ${code}`);
  }
}

/** Our public address, whether we run in production, and the platforms' settings (each platform reads its own). */
export type ConnectConfig = { publicBaseUrl: string; isProduction: boolean } & Config['stores'];

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
