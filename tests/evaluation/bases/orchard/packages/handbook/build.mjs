import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const [source, target] = process.argv.slice(2);
mkdirSync(target, { recursive: true });
for (const page of readdirSync(source).filter((name) => name.endsWith(".md"))) {
  const text = readFileSync(join(source, page), "utf8");
  const title = text.split("\n", 1)[0].replace(/^#\s*/, "");
  const html = `<!doctype html><title>${title}</title><pre>${text}</pre>\n`;
  writeFileSync(join(target, page.replace(/\.md$/, ".html")), html);
}
