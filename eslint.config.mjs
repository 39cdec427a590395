import nextCoreWebVitals from "eslint-config-next/core-web-vitals";
import nextTypescript from "eslint-config-next/typescript";

const LEASE_ENTRY_POINTS =
  "Import the lease library by its package name: @leasewatch/lease, or @leasewatch/lease/model, /testing, /testing/contract, /internal (see docs/library.md).";

const config = [
  ...nextCoreWebVitals,
  ...nextTypescript,
  {
    ignores: [".next/**", "node_modules/**", "test-results/**", "playwright-report/**", "next-env.d.ts", ".demo/**", ".tmp/**", "packages/*/dist/**"],
  },
  {
    // Everything outside the library uses it as its users do: by the package's entry points.
    files: ["**/*.{ts,tsx,mts,cts,js,mjs,cjs}"],
    ignores: ["lib/lease/**"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            { group: ["@/lib/lease", "@/lib/lease/*"], message: LEASE_ENTRY_POINTS },
            { regex: "^(\\.{1,2}/)+(lib/)?lease(/|$)", message: LEASE_ENTRY_POINTS },
          ],
        },
      ],
    },
  },
  {
    // Browser code: values only from /model, which loads neither zod nor node: modules nor a driver.
    files: ["components/**/*.{ts,tsx}"],
    rules: {
      "@typescript-eslint/no-restricted-imports": [
        "error",
        {
          paths: ["@leasewatch/lease", "@leasewatch/lease/internal", "@leasewatch/lease/testing", "@leasewatch/lease/testing/contract"].map((name) => ({
            name,
            allowTypeImports: true,
            message: "Client components take values from @leasewatch/lease/model.",
          })),
        },
      ],
    },
  },
  {
    // The lease library is framework-free: it may be published alone.
    files: ["lib/lease/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            { group: ["next", "next/*", "react", "react-*", "next-auth", "next-auth/*"], message: "lib/lease must not import a framework." },
            { group: ["@/lib/console/*", "@/lib/auth/*", "@/lib/audit/*", "@/app/*", "@/components/*"], message: "lib/lease sits below every other layer." },
            { group: ["@/lib/lease", "@/lib/lease/*", "@leasewatch/lease", "@leasewatch/lease/*"], message: "Inside lib/lease, import its files by relative path." },
            { group: ["pino", "pino/*", "@/lib/log/*"], message: "lib/lease does not log: report through a callback (like onWarning) and let the caller log." },
          ],
        },
      ],
    },
  },
  {
    // Server code logs through lib/log/logger.ts (JSON lines with the request id), never the console.
    // Command-line tools (migrate, audit:verify, api:token, demo, seeders, bench) print to the terminal.
    files: ["lib/**/*.{ts,tsx}", "app/**/*.{ts,tsx}", "instrumentation.ts", "proxy.ts", "scripts/api.ts", "scripts/sweeper.ts", "scripts/console.ts", "scripts/observer.ts"],
    ignores: ["**/*.test.ts", "app/error.tsx"],
    rules: {
      "no-console": "error",
    },
  },
];

export default config;
