export type { CarrierCity, CityMatch } from './cities';
export { cityKey, knownCity, matchCity } from './cities';
export { MOROCCAN_CITIES } from './city-names';
