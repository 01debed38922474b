import { describe, expect, it } from "vitest";
import { grossTotal, netTotal, nextNumber } from "../src/invoices";

const invoice = {
  number: "2024-00041",
  region: "NL",
  lines: [
    { description: "Consulting", quantity: 3, unitPrice: 12000 },
    { description: "Travel", quantity: 1, unitPrice: 4550 },
  ],
};

describe("invoices", () => {
  it("sums the lines", () => {
    expect(netTotal(invoice)).toBe(40550);
  });

  it("adds the tax of the region", () => {
    expect(grossTotal(invoice)).toBe(49065);
  });

  it("numbers invoices sequentially", () => {
    expect(nextNumber("2024-00041")).toBe("2024-00042");
  });
});
