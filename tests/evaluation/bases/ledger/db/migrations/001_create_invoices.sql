create table invoices (
  number text primary key,
  region text not null,
  issued_on date not null
);
