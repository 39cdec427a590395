// @ts-check
/** @type {import('next').NextConfig} */
const nextConfig = {
  reactStrictMode: true,
  poweredByHeader: false,
  // pg, ioredis and oidc-provider are Node libraries with optional native bits;
  // keep them out of the server bundle and require them at runtime.
  serverExternalPackages: ["pg", "ioredis", "prom-client"],
};

module.exports = nextConfig;
