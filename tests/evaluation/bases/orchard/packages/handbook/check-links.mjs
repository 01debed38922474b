import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const [source] = process.argv.slice(2);
const pages = readdirSync(source).filter((name) => name.endsWith(".md"));
let broken = 0;
for (const page of pages) {
  for (const match of readFileSync(join(source, page), "utf8").matchAll(/\]\(([^)#]+\.md)/g)) {
    if (!pages.includes(match[1])) {
      console.error(`${page}: no page ${match[1]}`);
      broken += 1;
    }
  }
}
process.exit(broken === 0 ? 0 : 1);
