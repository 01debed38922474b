import { describe, expect, it } from "vitest";
import { Cart } from "../src/cart";
import { formatPrice } from "../src/format";

describe("Cart", () => {
  it("merges items with the same SKU", () => {
    const cart = new Cart();
    cart.add({ sku: "mug", quantity: 1, unitPrice: 900 });
    cart.add({ sku: "mug", quantity: 2, unitPrice: 900 });
    expect(cart.count()).toBe(1);
    expect(cart.total()).toBe(2700);
  });

  it("formats prices in euros", () => {
    expect(formatPrice(2700)).toBe("€27.00");
  });
});
