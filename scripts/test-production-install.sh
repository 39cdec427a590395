#!/usr/bin/env bash
# The production install, proved on a clean copy of the working tree (tracked and untracked files,
# nothing ignored: no node_modules, .next or dist): `npm ci`, `npm run build`, `npm prune --omit=dev`,
# then the migrations, the lock API, the sweeper and the console start with plain `node` against the
# local PostgreSQL and Redis (a schema and key namespace of their own), answer their probes, and
# stop on SIGTERM with exit 0. Part of `npm test`; alone: `bash scripts/test-production-install.sh`.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DATABASE_URL="${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres}"
REDIS_URL="${REDIS_URL:-redis://127.0.0.1:6379}"
SUFFIX="$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')"
SCHEMA="lw_prod_${SUFFIX}"
CONSOLE_SCHEMA="lw_prodc_${SUFFIX}"
NAMESPACE="lwprod${SUFFIX}"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/leasewatch-prod-XXXXXX")"
PIDS=()

log() { printf '[production install] %s\n' "$*"; }
fail() { log "FAILED: $*"; for f in "$WORK"/*.log; do [ -f "$f" ] && { echo "--- $f"; tail -n 30 "$f"; }; done; exit 1; }
cleanup() {
  for pid in "${PIDS[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
  # The services only ever wrote after the install, so its pg and ioredis can clean up.
  if [ -d "$WORK/node_modules/pg" ]; then
    (cd "$WORK" && node -e '
      const [url, redisUrl, ns, ...schemas] = process.argv.slice(1);
      const pool = new (require("pg").Pool)({ connectionString: url });
      const redis = new (require("ioredis").Redis)(redisUrl, { lazyConnect: true });
      (async () => {
        for (const schema of schemas) await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        await redis.connect();
        let cursor = "0";
        do {
          const [next, keys] = await redis.scan(cursor, "MATCH", `${ns}:*`, "COUNT", 1000);
          if (keys.length) await redis.unlink(...keys);
          cursor = next;
        } while (cursor !== "0");
      })().finally(() => Promise.allSettled([pool.end(), redis.quit()]));
    ' "$DATABASE_URL" "$REDIS_URL" "$NAMESPACE" "$SCHEMA" "$CONSOLE_SCHEMA") >/dev/null 2>&1 || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

log "copying the working tree to $WORK"
(cd "$ROOT" && git ls-files -z --cached --others --exclude-standard | tar --null --ignore-failed-read -T - -cf - 2>/dev/null) | tar -xf - -C "$WORK"
# Next.js's compiler cache only makes the build faster; what it builds is the copy's own source.
if [ -d "$ROOT/.next/cache" ]; then mkdir -p "$WORK/.next" && cp -a "$ROOT/.next/cache" "$WORK/.next/cache"; fi
cd "$WORK"

log "npm ci"; PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --prefer-offline --loglevel=error >"$WORK/npm-ci.log" 2>&1 || fail "npm ci"
log "npm run build"; npm run build >"$WORK/build.log" 2>&1 || fail "npm run build"
log "npm prune --omit=dev"; npm prune --omit=dev --no-audit --no-fund --loglevel=error >"$WORK/prune.log" 2>&1 || fail "npm prune"
for dev in tsx typescript esbuild vitest oidc-provider eslint; do
  [ ! -e "node_modules/$dev" ] || fail "node_modules/$dev is still installed after the prune"
done
[ ! -e node_modules/.bin/tsx ] || fail "tsx is still on the path"
# npm keeps @playwright/test (an optional peer of next, so "devOptional") through --omit=dev; nothing at
# runtime loads it. Removing it here proves that, as an image build may do to save the space.
rm -rf node_modules/@playwright node_modules/playwright node_modules/playwright-core

export NODE_ENV=production
export LEASEWATCH_STORES="[{\"name\":\"pg-prod\",\"kind\":\"postgres\",\"url\":\"$DATABASE_URL\",\"schema\":\"$SCHEMA\"},{\"name\":\"redis-prod\",\"kind\":\"redis\",\"url\":\"$REDIS_URL\",\"namespace\":\"$NAMESPACE\"}]"
export LEASEWATCH_CONSOLE_SCHEMA="$CONSOLE_SCHEMA"
export LEASEWATCH_AUDIT_KEY="production-install-test-audit-key-${SUFFIX}-0123456789"
export LEASEWATCH_API_HANDLE_KEY="production-install-test-handle-key-${SUFFIX}-0123456789"
export METRICS_TOKEN="production-install-test-metrics-${SUFFIX}-0123456789"
export LEASEWATCH_SHUTDOWN_GRACE_MS=10000
# Sign-in is configured as for the demo (a loopback IdP is allowed with LEASEWATCH_DEMO=1); the
# probes need no IdP, and a page only has to send the visitor to sign in.
export LEASEWATCH_DEMO=1 OIDC_ISSUER=http://127.0.0.1:9 OIDC_CLIENT_ID=leasewatch OIDC_CLIENT_SECRET="client-secret-${SUFFIX}"
export NEXTAUTH_URL=http://127.0.0.1:3000 NEXTAUTH_SECRET="nextauth-secret-${SUFFIX}-0123456789abcdef"
export LEASEWATCH_ROLE_MAP="leasewatch-operators:operator,leasewatch-viewers:viewer"

log "node dist/migrate.js"; node dist/migrate.js >"$WORK/migrate.log" 2>&1 || fail "migrations"
node dist/audit-verify.js >"$WORK/audit-verify.log" 2>&1 || fail "audit verify"
node dist/api-token.js list >"$WORK/api-token.log" 2>&1 || fail "api-token list"

# start NAME SCRIPT ENV…: starts `node dist/SCRIPT.js` in the background; its log is $WORK/NAME.log.
start() {
  local name="$1" script="$2"; shift 2
  env "$@" node "dist/$script.js" >"$WORK/$name.log" 2>&1 &
  PIDS+=("$!")
  eval "PID_${name}=$!"
}
# url_of NAME: the address the service printed ("listening at …" / "metrics at …").
url_of() {
  local name="$1" url=""
  for _ in $(seq 1 300); do
    url="$(grep -oE '(listening|metrics) at http://[0-9.:]+' "$WORK/$name.log" | head -n1 | sed 's/.* at //')" || true
    [ -n "$url" ] && { echo "$url"; return 0; }
    kill -0 "$(eval echo "\$PID_${name}")" 2>/dev/null || break
    sleep 0.1
  done
  fail "$name did not start"
}
# expect_http URL STATUS [BODY-PATTERN] [curl args…]
expect_http() {
  local url="$1" status="$2" pattern="${3:-}"; shift 3 || shift $#
  local got body
  body="$(curl -s -o - -w '\n%{http_code}' "$@" "$url")" || fail "GET $url: no answer"
  got="${body##*$'\n'}"; body="${body%$'\n'*}"
  [ "$got" = "$status" ] || fail "GET $url answered $got, expected $status: $body"
  if [ -n "$pattern" ] && ! grep -qE "$pattern" <<<"$body"; then fail "GET $url: body does not match /$pattern/: $body"; fi
  log "GET $url → $got"
}
# expect_http_eventually URL STATUS PATTERN: waits up to 30 s for the answer.
expect_http_eventually() {
  for _ in $(seq 1 300); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "$1")" = "$2" ] && break
    sleep 0.1
  done
  expect_http "$1" "$2" "$3"
}
# stop NAME: SIGTERM, then the exit status must be 0.
stop() {
  local name="$1" pid code=0
  pid="$(eval echo "\$PID_${name}")"
  kill -TERM "$pid"
  wait "$pid" || code=$?
  [ "$code" = 0 ] || fail "$name exited $code after SIGTERM"
  log "$name stopped on SIGTERM, exit 0"
}

start api api LEASEWATCH_API_PORT=0
start sweeper sweeper LEASEWATCH_SWEEPER_PORT=0 SWEEP_INTERVAL_MS=500
start console console PORT=0 LEASEWATCH_CONSOLE_HOST=127.0.0.1
# A console whose own database (sessions, audit) does not answer is alive but not ready: its
# "database" accepts connections and never replies, so each /readyz takes its full 1.5 s.
node -e 'const s = require("node:net").createServer(() => {}).listen(0, "127.0.0.1", () => console.log(`listening at http://127.0.0.1:${s.address().port}`))' >"$WORK/silent_db.log" 2>&1 &
PIDS+=("$!"); PID_silent_db=$!; disown "$PID_silent_db"
SILENT_DB_PORT="$(url_of silent_db | sed 's/.*://')"
start console_nodb console PORT=0 LEASEWATCH_CONSOLE_HOST=127.0.0.1 LEASEWATCH_AUDIT_URL="postgres://postgres@127.0.0.1:$SILENT_DB_PORT/postgres"
API="$(url_of api)"; SWEEPER="$(url_of sweeper)"; CONSOLE="$(url_of console)"; CONSOLE_NODB="$(url_of console_nodb)"

expect_http "$API/livez" 200 '"ok":true'
expect_http "$API/readyz" 200 '"ready":true'
expect_http "$API/v1/locks" 401 'unauthorized'
expect_http "$SWEEPER/livez" 200 '"ok":true'
expect_http_eventually "$SWEEPER/readyz" 200 '"ready":true'
expect_http "$SWEEPER/metrics" 200 'leasewatch_sweeper_sweeps_total\{store="redis-prod"\} [1-9]' -H "Authorization: Bearer $METRICS_TOKEN"
expect_http "$CONSOLE/livez" 200 '^\{"ok":true\}$'
expect_http "$CONSOLE/readyz" 200 '^\{"ready":true\}$'
expect_http "$CONSOLE/" 307 '' -H 'accept: text/html'
expect_http "$CONSOLE/api/health" 401 'error'
expect_http "$CONSOLE_NODB/livez" 200 '^\{"ok":true\}$'
expect_http "$CONSOLE_NODB/readyz" 503 '^\{"ready":false\}$'

# SIGTERM while a /readyz is in flight: it is answered, new connections are refused, exit 0.
curl -s -o "$WORK/inflight.body" -w '%{http_code}' "$CONSOLE_NODB/readyz" >"$WORK/inflight.status" &
INFLIGHT=$!
sleep 0.5
kill -TERM "$PID_console_nodb"
for _ in $(seq 1 50); do
  code=0; curl -s -o /dev/null --max-time 2 "$CONSOLE_NODB/livez" || code=$?
  [ "$code" = 7 ] && break   # 7: could not connect
  sleep 0.05
done
[ "$code" = 7 ] || fail "the stopping console still accepted a new connection (curl exit $code)"
log "the stopping console refuses new connections"
wait "$INFLIGHT" || true
[ "$(cat "$WORK/inflight.status")" = 503 ] && grep -q '^{"ready":false}$' "$WORK/inflight.body" \
  || fail "the /readyz in flight at SIGTERM was not answered: $(cat "$WORK/inflight.status") $(cat "$WORK/inflight.body")"
log "the /readyz in flight at SIGTERM was answered: 503 $(cat "$WORK/inflight.body")"
code=0; wait "$PID_console_nodb" || code=$?
[ "$code" = 0 ] || fail "console_nodb exited $code after SIGTERM"
log "console_nodb stopped on SIGTERM, exit 0"

stop api; stop sweeper; stop console
log "passed in ${SECONDS} s"
