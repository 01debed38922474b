export interface Bed {
  lengthCm: number;
  widthCm: number;
}

export function squareMetres(bed: Bed): number {
  return (bed.lengthCm * bed.widthCm) / 10_000;
}
