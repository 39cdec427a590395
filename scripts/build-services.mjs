/**
 * Bundles the services and commands into dist/, one CommonJS file each, so a production install
 * (`npm prune --omit=dev`) starts them with plain `node`: no tsx, no TypeScript. The console's
 * server (dist/console.js) serves the Next.js build in .next, which `next build` makes first.
 * Packages stay external and are required from node_modules at runtime; only this repo's own
 * code (the `@/` paths) is bundled.
 */
import { build } from "esbuild";
import { rm } from "node:fs/promises";
import path from "node:path";

const ROOT = path.resolve(import.meta.dirname, "..");

/** dist/<name>.js ← scripts/<source>.ts */
const SERVICES = {
  console: "console",
  api: "api",
  sweeper: "sweeper",
  observer: "observer",
  migrate: "migrate",
  "audit-verify": "audit-verify",
  "api-token": "api-token",
  // The module the leasewatch command loads for the console's commands (package.json "leasewatch.consoleCommands").
  "console-commands": "commands/index",
};

await rm(path.join(ROOT, "dist"), { recursive: true, force: true });
await build({
  absWorkingDir: ROOT,
  entryPoints: Object.entries(SERVICES).map(([out, source]) => ({ in: `scripts/${source}.ts`, out })),
  outdir: "dist",
  bundle: true,
  packages: "external",
  platform: "node",
  target: "node20.18",
  format: "cjs",
  tsconfig: "tsconfig.json",
  sourcemap: "linked",
  logLevel: "warning",
});
console.log(`built ${Object.keys(SERVICES).map((name) => `dist/${name}.js`).join(", ")}`);
