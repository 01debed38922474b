import { litresToGallons, squareMetres, type Bed } from "@orchard/units";

export interface Planting {
  crop: string;
  bed: Bed;
  litresPerSquareMetre: number;
}

// Weekly water for a planting, in the gallons the supplier charts print.
export function weeklyWater(planting: Planting): { litres: number; gallons: number } {
  const litres = squareMetres(planting.bed) * planting.litresPerSquareMetre;
  return { litres, gallons: litresToGallons(litres) };
}
