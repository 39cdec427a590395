import { defineConfig } from "tsup";

// The sources stay in lib/lease (the console builds from them directly); this package is their published build.
const SRC = "../../lib/lease";
const REQUIRE_BANNER = 'import { createRequire as __createRequire } from "node:module";\nconst require = __createRequire(import.meta.url);';

export default defineConfig([
  {
    entry: {
      index: `${SRC}/index.ts`,
      model: `${SRC}/model.ts`,
      internal: `${SRC}/internal.ts`,
      "testing/index": `${SRC}/testing/index.ts`,
      "testing/contract": `${SRC}/testing/contract.ts`,
    },
    format: ["esm", "cjs"],
    platform: "node",
    target: "node20",
    dts: true,
    // Shared chunks in both formats, so every entry of one format sees the same classes (instanceof LeaseError).
    splitting: true,
    // The drivers are loaded with require() on first use (lib/lease/optional-peer.ts); ES modules get one.
    banner: ({ format }) => (format === "esm" ? { js: REQUIRE_BANNER } : {}),
    removeNodeProtocol: false,
    // The contract suite runs in the user's vitest: never bundled, and not a peer dependency, so a
    // production install (npm prune --omit=dev) of an app that depends on the package drops it.
    external: ["vitest"],
    tsconfig: "tsconfig.json",
  },
  {
    entry: { cli: `${SRC}/cli/main.ts` },
    format: ["esm"],
    banner: { js: REQUIRE_BANNER },
    platform: "node",
    target: "node20",
    removeNodeProtocol: false,
    tsconfig: "tsconfig.json",
  },
]);
