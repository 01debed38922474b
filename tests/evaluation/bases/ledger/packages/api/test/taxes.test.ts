import { describe, expect, it } from "vitest";
import { ruleFor, taxFor } from "../src/taxes";

describe("taxFor", () => {
  it("applies the regional rate", () => {
    expect(taxFor(10000, ruleFor("DE"))).toBe(1900);
  });

  it("rounds fractions of a cent down", () => {
    expect(taxFor(333, ruleFor("FR"))).toBe(66);
  });

  it("rejects unknown regions", () => {
    expect(() => ruleFor("XX")).toThrow();
  });
});
