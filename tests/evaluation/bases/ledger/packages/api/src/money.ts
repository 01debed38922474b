export type Cents = number;

export function toCents(amount: number): Cents {
  return Math.round(amount * 100);
}

export function formatCents(value: Cents, currency: string): string {
  const sign = value < 0 ? "-" : "";
  const absolute = Math.abs(value);
  const units = Math.floor(absolute / 100);
  const rest = String(absolute % 100).padStart(2, "0");
  return `${sign}${units}.${rest} ${currency}`;
}
