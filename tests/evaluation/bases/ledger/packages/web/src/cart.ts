export interface CartItem {
  sku: string;
  quantity: number;
  unitPrice: number;
}

export class Cart {
  private readonly items = new Map<string, CartItem>();

  add(item: CartItem): void {
    const existing = this.items.get(item.sku);
    if (existing) {
      existing.quantity += item.quantity;
    } else {
      this.items.set(item.sku, { ...item });
    }
  }

  remove(sku: string): void {
    this.items.delete(sku);
  }

  total(): number {
    let sum = 0;
    for (const item of this.items.values()) {
      sum += item.quantity * item.unitPrice;
    }
    return sum;
  }

  count(): number {
    return this.items.size;
  }
}
