/** The sign-in settings of a production deployment that pass every start-up check. */
export const PRODUCTION_AUTH_ENV = {
  NODE_ENV: "production",
  OIDC_ISSUER: "https://sso.example.com/realms/ops",
  OIDC_CLIENT_ID: "leasewatch-console",
  OIDC_CLIENT_SECRET: "a-real-registered-client-secret",
  NEXTAUTH_URL: "https://leasewatch.example.com",
  NEXTAUTH_SECRET: "y".repeat(40),
  LEASEWATCH_ROLE_MAP: "sre-oncall:operator,engineering:viewer",
} as const;
