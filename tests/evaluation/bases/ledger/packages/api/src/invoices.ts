import { Cents } from "./money";
import { ruleFor, taxFor } from "./taxes";

export interface Line {
  description: string;
  quantity: number;
  unitPrice: Cents;
}

export interface Invoice {
  number: string;
  region: string;
  lines: Line[];
}

export function netTotal(invoice: Invoice): Cents {
  return invoice.lines.reduce((sum, line) => sum + line.quantity * line.unitPrice, 0);
}

export function grossTotal(invoice: Invoice): Cents {
  const net = netTotal(invoice);
  return net + taxFor(net, ruleFor(invoice.region));
}

export function nextNumber(previous: string): string {
  const [year, sequence] = previous.split("-");
  return `${year}-${String(Number(sequence) + 1).padStart(5, "0")}`;
}
