/**
 * Import rules checked by `npm test` (dependency-cruiser). The layers, lowest first:
 * lib/lease (the library) → lib/server (configuration, store registry, shared
 * server helpers) → lib/auth → lib/api → lib/audit → lib/console → app/, components/.
 * A module may import its own layer and the ones below it, never above.
 */
/** Tests may cross layers (an integration test reads what the layer above shows). */
const TEST_FILE = "\\.test\\.tsx?$";

const layer = (name, above) => ({
  name: `${name.replace(/\W+/g, "-")}-imports-downward`,
  comment: `${name} may not import ${above.join(", ")}: dependencies point one way (docs/architecture.md)`,
  severity: "error",
  from: { path: `^${name}/`, pathNot: TEST_FILE },
  to: { path: `^(${above.join("|")})/` },
});

module.exports = {
  forbidden: [
    {
      name: "no-circular",
      comment: "Modules never import each other in a circle.",
      severity: "error",
      from: { pathNot: TEST_FILE },
      to: { circular: true },
    },
    {
      name: "library-is-standalone",
      comment: "lib/lease is published alone: it imports nothing of the app and no framework.",
      severity: "error",
      from: { path: "^lib/lease/", pathNot: TEST_FILE },
      to: { path: "^(app|components|scripts|e2e|test|bench|lib/(?!lease/))|node_modules/(next|react|react-dom|next-auth|@tanstack|recharts)/" },
    },
    layer("lib/server", ["lib/auth", "lib/api", "lib/audit", "lib/console", "app", "components"]),
    layer("lib/observed", ["lib/server", "lib/auth", "lib/api", "lib/audit", "lib/console", "app", "components"]),
    layer("lib/auth", ["lib/api", "lib/audit", "lib/console", "app", "components"]),
    layer("lib/api", ["lib/audit", "lib/console", "app", "components"]),
    layer("lib/audit", ["lib/console", "app", "components"]),
    layer("lib/console", ["app", "components"]),
    {
      name: "console-features-stand-apart",
      comment:
        "A lib/console feature folder uses its own files and lib/console/shared, never another feature's: what two features share moves to shared/. Query keys are a feature's public face (a mutation invalidates another page's queries by them).",
      severity: "error",
      from: { path: "^lib/console/([^/]+)/", pathNot: [TEST_FILE, "^lib/console/testing/"] },
      to: { path: "^lib/console/[^/]+/", pathNot: ["^lib/console/$1/", "^lib/console/shared/", "/keys\\.ts$"] },
    },
    {
      name: "pages-build-no-store-commands",
      comment: "Pages and components never talk to Postgres or Redis themselves: read models in lib/ do.",
      severity: "error",
      from: { path: "^(app|components)/" },
      to: { path: "node_modules/(pg|ioredis)/" },
    },
  ],
  options: {
    tsConfig: { fileName: "tsconfig.json" },
    tsPreCompilationDeps: true,
    doNotFollow: { path: "node_modules" },
    exclude: { path: "(^|/)(node_modules|\\.next|dist)/" },
    enhancedResolveOptions: { exportsFields: ["exports"], conditionNames: ["import", "require", "node", "default", "types"] },
  },
};
