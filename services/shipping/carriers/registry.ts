import { withoutCredentials } from './common';
import { digylog } from './digylog';
import { ozonExpress } from './ozon-express';
import { sendit } from './sendit';
import type { CarrierKind, ShippingAdapter } from './types';
import { yalidine } from './yalidine';

/** Every carrier the service can call: one line per kind (none of their reasons carries the account's credentials). */
export const SHIPPING_ADAPTERS: Record<CarrierKind, ShippingAdapter> = {
  sendit: withoutCredentials(sendit),
  ozon_express: withoutCredentials(ozonExpress),
  digylog: withoutCredentials(digylog),
  yalidine: withoutCredentials(yalidine),
};

/** The adapter of a kind as stored or typed (an account's `kind`), or undefined for any other word. */
export function shippingAdapter(kind: string): ShippingAdapter | undefined {
  return Object.hasOwn(SHIPPING_ADAPTERS, kind) ? SHIPPING_ADAPTERS[kind as CarrierKind] : undefined;
}

/** What the pages show of each kind: its name, the credentials its form asks for, whether it needs a pickup city. */
export const SHIPPING_KINDS = Object.values(SHIPPING_ADAPTERS).map((adapter) => ({
  kind: adapter.kind,
  title: adapter.title,
  credentials: adapter.credentials,
  needsPickupCity: adapter.needsPickupCity,
  push: adapter.push,
}));
