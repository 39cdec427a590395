// @ts-check
/** @type {import('next').NextConfig} */
const nextConfig = {
  reactStrictMode: true,
  poweredByHeader: false,
  // pg, ioredis and oidc-provider are Node libraries with optional native bits;
  // keep them out of the server bundle and require them at runtime.
  // The OpenTelemetry SDK loads exporters and detectors at runtime: required, not bundled.
  serverExternalPackages: ["pg", "ioredis", "prom-client", "@opentelemetry/api", "@opentelemetry/sdk-node", "@opentelemetry/exporter-prometheus"],
};

module.exports = nextConfig;
