import { describe, expect, it } from "vitest";
import { weeklyWater } from "../src/watering.js";

describe("weeklyWater", () => {
  it("scales with the bed area", () => {
    const plan = weeklyWater({
      crop: "lettuce",
      bed: { lengthCm: 400, widthCm: 95 },
      litresPerSquareMetre: 20,
    });
    expect(plan.litres).toBe(76);
    expect(plan.gallons).toBe(20);
  });
});
