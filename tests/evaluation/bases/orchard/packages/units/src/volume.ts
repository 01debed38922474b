// US liquid gallons, which the seed suppliers' irrigation charts use.
const LITRES_PER_GALLON = 3.8;

export function litresToGallons(litres: number): number {
  return Math.round((litres / LITRES_PER_GALLON) * 10) / 10;
}

export function gallonsToLitres(gallons: number): number {
  return Math.round(gallons * LITRES_PER_GALLON * 10) / 10;
}
