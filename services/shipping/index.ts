export type { CarrierCity, CityMatch } from './cities';
export { cityKey, knownCity, matchCity } from './cities';
export { MOROCCAN_CITIES } from './city-names';
export { SHIPPING_ADAPTERS, shippingAdapter } from './carriers/registry';
export { carrierSession } from './carriers/session';
export type { CarrierSession, CreateOutcome, ParcelRequest, ShippingAdapter } from './carriers/types';
