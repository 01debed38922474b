create table invoice_lines (
  invoice_number text not null references invoices (number),
  description text not null,
  quantity integer not null,
  unit_price_cents integer not null
);
