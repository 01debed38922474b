import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";

const [directory, schemaFile] = process.argv.slice(2);
const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
await client.connect();
for (const name of readdirSync(directory).sort()) {
  await client.query(readFileSync(join(directory, name), "utf8"));
}
const { rows } = await client.query(
  "select table_name, column_name, data_type from information_schema.columns where table_schema = 'public' order by 1, 2",
);
const actual = rows.map((row) => `${row.table_name}.${row.column_name} ${row.data_type}`).join("\n");
const expected = readFileSync(schemaFile, "utf8").split("\n").filter((line) => line.startsWith("-- ")).map((line) => line.slice(3)).join("\n");
await client.end();
if (actual !== expected) {
  console.error("schema drift: migrations and db/schema.sql disagree");
  process.exit(1);
}
