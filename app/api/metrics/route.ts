import { SCOPE_ALL } from "@/lib/auth/scope";
import { respondWithServerError } from "@/lib/auth/server-error";
import { ConfigError } from "@/lib/server/store-config";
import { getMetricsText } from "@/lib/console/metrics/get-metrics-text";
import { requireMetricsAccess } from "@/lib/console/metrics/metrics-access";

export const dynamic = "force-dynamic";

/**
 * Prometheus text for every configured store. A session (metrics:read) or
 * `Authorization: Bearer $METRICS_TOKEN`; see lib/console/metrics/metrics-access.ts.
 */
export async function GET(request: Request): Promise<Response> {
  const access = await requireMetricsAccess(request);
  if (!access.ok) return access.response;
  try {
    // Unscoped on purpose: the token scraper sees every store, and scoped sessions were refused above.
    const metrics = await getMetricsText({ scope: SCOPE_ALL });
    return new Response(metrics.body, { headers: { "content-type": metrics.contentType, "cache-control": "no-store" } });
  } catch (error) {
    if (error instanceof ConfigError) return respondWithServerError(error, "the console is misconfigured; see the server log");
    throw error;
  }
}
