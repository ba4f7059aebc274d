import type { ShippingAdapter } from './types';

/** One line per kind of carrier the service can call. */
export const SHIPPING_ADAPTERS: Record<string, ShippingAdapter> = {};

export function shippingAdapter(kind: string): ShippingAdapter | undefined {
  return Object.hasOwn(SHIPPING_ADAPTERS, kind) ? SHIPPING_ADAPTERS[kind] : undefined;
}

/** What the pages show of each kind: its name, the credentials its form asks for, whether it needs a pickup city. */
export const SHIPPING_KINDS = Object.values(SHIPPING_ADAPTERS).map((adapter) => ({
  kind: adapter.kind,
  title: adapter.title,
  credentials: adapter.credentials,
  needsPickupCity: adapter.needsPickupCity,
  push: adapter.push,
}));
