import { Cents } from "./money";

export interface TaxRule {
  region: string;
  ratePercent: number;
}

export const DEFAULT_RULES: TaxRule[] = [
  { region: "DE", ratePercent: 19 },
  { region: "FR", ratePercent: 20 },
  { region: "NL", ratePercent: 21 },
];

export function taxFor(net: Cents, rule: TaxRule): Cents {
  return Math.floor((net * rule.ratePercent) / 100);
}

export function ruleFor(region: string, rules: TaxRule[] = DEFAULT_RULES): TaxRule {
  const rule = rules.find((candidate) => candidate.region === region);
  if (!rule) {
    throw new Error(`no tax rule for ${region}`);
  }
  return rule;
}
