export type { CarrierAccount } from './accounts';
export { CarrierAccountService } from './accounts';
export type { CarrierCity, CityMatch } from './cities';
export { cityKey, knownCity, matchCity } from './cities';
export { MOROCCAN_CITIES } from './city-names';
export { ParcelSender } from './send';
export type { SendResult } from './send';
export { SHIP_MAX, ShipmentService } from './shipments';
export type { ShipmentView } from './shipments';
