import type { IncomingHttpHeaders } from 'node:http';
import type { z } from 'zod';
import type { DeliveryResult, OutboundRequest } from '../../../integrations/http';
import type { Secrets } from '../../../integrations/secrets';
import type { Message, WorkspaceActor } from '../../../services/shared';
import type { Connector } from '../connect/connector';
import type { ShopifyAdmin } from './shopify/admin';
import type { StoreAdapter } from './reader';
import type { Outcome, WriteBackStep } from './write-back';

/**
 * The contract between the stores' machinery (connections, intake, event log, write-back jobs,
 * approvals — written once) and one platform: a folder `platforms/<kind>/` whose `index.ts` is one
 * `StorePlatform`, and one line in `registry.ts`. The kinds, the order sources, which kinds write
 * back, the one-click routes and the pages' lists are all read from the registry.
 */

/** The shop's address a platform asks for (a Shopify name, a site's URL), as the forms and the API take it. */
interface ShopAddress {
  /** The address as a manual connection's `shop` is checked and kept. */
  schema: z.ZodType<string>;
  /** The address as the one-click form gives it; a ValidationError names the field when it is not one. */
  oneClick(given: string | undefined, isProduction: boolean): string;
  /** Its field's label (a locale key), its English name in a message, and an example. */
  label: string;
  apiLabel: string;
  example: string;
}

/** What write-back is handed for one connection. */
interface WriteBackTarget {
  connection_id: string;
  shop: string;
  // biome-ignore lint/suspicious/noExplicitAny: the credentials as stored, read by the platform's own steps
  write_back: any;
}

export interface WriteBackSettings {
  shopifyApiVersion: string;
  /** A test double in place of `https://{shop}`. */
  shopifyApiOrigin?: string;
  /** Waits between tries; the webhooks' schedule by default. */
  retrySeconds?: readonly number[];
  /** Production: credentials go over https only. */
  httpsOnly: boolean;
}

export interface WriteBackContext {
  settings: WriteBackSettings;
  secrets: Secrets;
  /** Shopify's Admin API, with the connection's token refreshed as it expires. */
  shopifyAdmin: ShopifyAdmin;
}

/** How a step was sent: its answer, or why it could not be (the platform's token). */
export type SentStep = { sent: DeliveryResult } | { reconnect: true } | { refreshFailed: DeliveryResult | null } | { noToken: true };

/** A platform that is told each outcome (write-back): the one place that says a kind writes back. */
interface PlatformWriteBack {
  /** The credentials a manual connection gives (`write_back` of POST /api/stores), one shape of the API's union. */
  credentials: z.ZodType;
  /** Why other credentials were refused for this kind. */
  wrongCredentials(): Message;
  /** The requests telling the store the outcome, or why none can be made (a failure shown on the connection). */
  steps(target: WriteBackTarget, order: { externalId: string; status: Outcome; summary: string | null }, context: WriteBackContext): WriteBackStep[] | Message;
  /** How a step is sent; as built by default. */
  send?(
    context: WriteBackContext,
    connectionId: string,
    request: OutboundRequest,
    send: (request: OutboundRequest) => Promise<DeliveryResult>,
  ): Promise<SentStep>;
}

/** The approval step's inputs: the shop typed (null where the platform names none), the state's nonce, the connection made first. */
interface Approval {
  shop: string | null;
  nonce: string;
  connectionId: string | null;
}

/** A platform connected in one click: the owner approves our app on the platform and comes back. */
interface PlatformConnect {
  /** Whether the operator set it up (an app's keys), so that the form offers it. */
  available(config: Connector['config']): boolean;
  /** The connection exists, pending, before the approval (the platform posts to an address naming it). */
  connectionFirst: boolean;
  /** Where the owner's browser is sent to approve. */
  approvalUrl(connector: Connector, approval: Approval): string;
  /** Our page the platform sends the owner back to: `/stores/<kind>/<back>`. */
  back: string;
  /** The name of the service's step for that page (`StoreConnectService.<step>`). */
  step: string;
  /** The owner back from the platform: the new connection's id, or a ConnectError. */
  finish(connector: Connector, workspace: WorkspaceActor, sessionId: string, query: URLSearchParams): Promise<string>;
  /** Its approval again replaces a connection's tokens (Reconnect: a token the platform no longer renews). */
  reconnects?: boolean;
  /** The words of the platform's approval screen the form's hint quotes (`storeConnect.approve.<kind>`), kept in English. */
  approveWords: Record<string, { strong: string }>;
}

/** The platform's strings in the locales: its guide on the pages, by key. */
interface PlatformGuide {
  /** The guide's heading: `storeGuide.heading` with the kind's name unless the platform has its own. */
  heading?: string;
  /** The hint of the manual form's signing key. */
  secretHint: string;
  /** A platform connected in one click only: what the page says instead of the manual form. */
  oneClickOnly?: { connected: string; heading: string; unavailable: string };
  /** The guide's steps (an ordered list) and its paragraphs after them, each a key and its values. */
  text(helpers: GuideHelpers): { steps: GuideLine[]; after: GuideLine[] };
}

type GuideLine = [key: string, values: Record<string, unknown>];

/** What a guide's values are made with, on the page: its words, the intake URL, an admin's menu name, a piece of code. */
interface GuideHelpers {
  t(key: string): string;
  url: unknown;
  admin(key: string): unknown;
  code(text: string): unknown;
}

export interface StorePlatform {
  kind: string;
  /** Its name where the API's description lists the platforms; none for our own body (a custom sender). */
  title?: string;
  /** How its messages are signed and read. */
  reader: StoreAdapter;
  /** Who chooses the key its messages are signed with: the store (required), the store or we (when left out), we alone. */
  signingKey: 'store' | 'store-or-us' | 'us';
  /** Whether the pages offer connecting it by hand (a webhook made in the store's admin); false: one click only. */
  manual: boolean;
  /** The shop's address it asks for; none: a site's URL, optional and not on the forms. */
  address?: ShopAddress;
  /** Its pings are answered while a connection is set up in one click (the platform checks each webhook it is given). */
  pingsWhilePending?: boolean;
  writeBack?: PlatformWriteBack;
  connect?: PlatformConnect;
  /** The day its connection must be reconnected before (a token the platform stops taking), else null. */
  reconnectBefore?(connection: { connected_by: string | null; write_back: unknown }): string | null;
  /** Whether a verified message was sent for this connection (an app's one secret signs for every shop). */
  sentFor?(headers: IncomingHttpHeaders, connection: { connected_by: string | null; shop: string | null }): boolean;
  /** Whether a signed body is the platform's record of this shop, removing our app. */
  uninstalls?(body: unknown, shop: string | null): boolean;
  /** How its messages are signed and what they carry, as the API's description of the intake says it. */
  intakeDoc: string;
  guide: PlatformGuide;
}
