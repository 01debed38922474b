import { existsSync } from "node:fs";

// Fails early when the runner's toolchain is older than the workspace expects.
const major = Number(process.versions.node.split(".")[0]);
if (major < 20) {
  console.error(`orchard needs Node.js 20 or later, found ${process.versions.node}`);
  process.exit(1);
}
if (!existsSync("pnpm-lock.yaml")) {
  console.error("pnpm-lock.yaml is missing; run pnpm install at the workspace root");
  process.exit(1);
}
console.log(`node ${process.versions.node}: ok`);
