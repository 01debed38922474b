import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const [source, target] = process.argv.slice(2);
mkdirSync(target, { recursive: true });
const pages = readdirSync(source).filter((name) => name.endsWith(".md"));
let broken = 0;
for (const page of pages) {
  const text = readFileSync(join(source, page), "utf8");
  for (const match of text.matchAll(/\]\(([^)]+\.md)\)/g)) {
    if (!pages.includes(match[1])) {
      console.error(`${page}: broken link to ${match[1]}`);
      broken += 1;
    }
  }
  writeFileSync(join(target, page.replace(/\.md$/, ".html")), `<pre>${text}</pre>`);
}
process.exit(broken === 0 ? 0 : 1);
