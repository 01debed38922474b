import { describe, expect, it } from "vitest";
import { gallonsToLitres, litresToGallons } from "../src/volume.js";

describe("volume", () => {
  it("converts litres to gallons", () => {
    expect(litresToGallons(38)).toBe(10);
  });

  it("converts gallons to litres", () => {
    expect(gallonsToLitres(2)).toBe(7.6);
  });
});
