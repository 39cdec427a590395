import { defineConfig } from "vitest/config";
import { fileURLToPath } from "node:url";

const fromRoot = (file: string) => fileURLToPath(new URL(file, import.meta.url));

export default defineConfig({
  resolve: {
    // The package's entry points resolve to the sources in lib/lease, as tsconfig.json's paths do.
    alias: [
      { find: /^@leasewatch\/lease$/, replacement: fromRoot("./lib/lease/index.ts") },
      { find: /^@leasewatch\/lease\/model$/, replacement: fromRoot("./lib/lease/model.ts") },
      { find: /^@leasewatch\/lease\/internal$/, replacement: fromRoot("./lib/lease/internal.ts") },
      { find: /^@leasewatch\/lease\/testing$/, replacement: fromRoot("./lib/lease/testing/index.ts") },
      { find: /^@leasewatch\/lease\/testing\/contract$/, replacement: fromRoot("./lib/lease/testing/contract.ts") },
      { find: "@", replacement: fromRoot(".") },
    ],
  },
  test: {
    include: ["lib/**/*.test.ts", "test/**/*.test.ts", "scripts/**/*.test.ts"],
    environment: "node",
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Fault tests start and kill real servers; keep files from starving each other on 2 cores.
    fileParallelism: true,
    maxWorkers: 2,
    reporters: ["default"],
  },
});
