import type { ShippingAdapter } from './types';

/** One line per kind of carrier the service can call. */
export const SHIPPING_ADAPTERS: Record<string, ShippingAdapter> = {};

export function shippingAdapter(kind: string): ShippingAdapter | undefined {
  return Object.hasOwn(SHIPPING_ADAPTERS, kind) ? SHIPPING_ADAPTERS[kind] : undefined;
}
