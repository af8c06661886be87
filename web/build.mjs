// Copies the pinned browser libraries into the Python package's static folder.
// Run `npm ci && npm run build` here after changing a version in package.json, then commit
// netsight/server/dashboard/static/vendor/ (tests/server/test_dashboard.py checks the pin).
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const vendor = join(here, "..", "netsight", "server", "dashboard", "static", "vendor");
mkdirSync(vendor, { recursive: true });

const files = { cytoscape: ["dist/cytoscape.min.js", "cytoscape.min.js"] };
for (const [name, [from, to]] of Object.entries(files)) {
  const root = join(here, "node_modules", name);
  const { version } = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  // The header names the version: the Python tests compare it with this package.json's pin.
  const header = `/*! ${name} ${version} - vendored from npm by web/build.mjs; do not edit */\n`;
  writeFileSync(join(vendor, to), header + readFileSync(join(root, from), "utf8"));
  console.log(`${name} ${version} -> ${join("vendor", to)}`);
}
