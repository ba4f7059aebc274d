import { ORDER_CHANNELS } from '../../orders';
import type { WorkspaceActor } from '../../../services/shared';
import { custom } from './custom';
import { shopify } from './shopify';
import type { StorePlatform } from './types';
import { woocommerce } from './woocommerce';
import { youcan } from './youcan';

/**
 * Every store platform the service takes orders from: one line per platform, in the order the pages
 * list them. The kinds, the order sources, which kinds write back, the one-click routes and the
 * pages' lists are read from here; a new platform adds its folder and its line (README.md).
 */
// biome-ignore format: one line per platform
export const STORE_PLATFORMS = [
  shopify,
  woocommerce,
  youcan,
  custom,
] as const satisfies readonly StorePlatform[];

type Platform = (typeof STORE_PLATFORMS)[number];
export type StoreKind = Platform['kind'];
/** The platforms connected in one click, and their kinds. */
type ConnectPlatform = Extract<Platform, { connect: object }>;
export type ConnectKind = ConnectPlatform['kind'];

/** The kinds, as the API's enums take them (never empty: the registry has its platforms). */
export const STORE_KINDS = STORE_PLATFORMS.map((platform) => platform.kind) as unknown as readonly [StoreKind, ...StoreKind[]];
export const CONNECT_PLATFORMS: readonly ConnectPlatform[] = STORE_PLATFORMS.filter((platform): platform is ConnectPlatform => 'connect' in platform);
export const CONNECT_KINDS = CONNECT_PLATFORMS.map((platform) => platform.kind) as unknown as readonly [ConnectKind, ...ConnectKind[]];
/** The kinds that are told each outcome (write-back): those whose platform has a `writeBack`. */
export const WRITE_BACK_KINDS: readonly StoreKind[] = STORE_PLATFORMS.filter((platform) => 'writeBack' in platform).map((platform) => platform.kind);

/** Where an order comes from: a channel of our own, or the kind of the store connection it came by. */
export const ORDER_SOURCES = [...ORDER_CHANNELS, ...STORE_KINDS] as const;

/** The platform of a kind as stored or typed, or undefined for any other word. */
export function storePlatform(kind: string): StorePlatform | undefined {
  return STORE_PLATFORMS.find((platform) => platform.kind === kind);
}

/** The one-click steps by the service's names for them (`wooReturn`): the owner back from each platform. */
export type ConnectSteps = {
  [P in ConnectPlatform as P['connect']['step']]: (workspace: WorkspaceActor, sessionId: string, query: URLSearchParams) => Promise<string>;
};
