import nextCoreWebVitals from "eslint-config-next/core-web-vitals";
import nextTypescript from "eslint-config-next/typescript";

const config = [
  ...nextCoreWebVitals,
  ...nextTypescript,
  {
    ignores: [".next/**", "node_modules/**", "test-results/**", "playwright-report/**", "next-env.d.ts", ".demo/**", ".tmp/**"],
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
          ],
        },
      ],
    },
  },
];

export default config;
