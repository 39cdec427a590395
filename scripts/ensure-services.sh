#!/usr/bin/env bash
# Makes sure everything the tests and the demo need is present and running:
# PostgreSQL, Redis, their server binaries (for the fault tests' throwaway
# instances), PgBouncer (the transaction-pooler tests start their own), Chromium for Playwright, promtool for the alert rule tests and a C compiler for the
# time-of-day tests' clock shim. Idempotent; installs with apt when
# something is missing and we are root. Honours DATABASE_URL / REDIS_URL.
set -euo pipefail

log() { printf '[services] %s\n' "$*"; }

PG_URL="${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres}"
REDIS_URL_="${REDIS_URL:-redis://127.0.0.1:6379}"
NEED_CHROMIUM="${NEED_CHROMIUM:-1}"

apt_updated=0
apt_install() {
  if [ "$(id -u)" != "0" ]; then
    log "missing $* and not root: install it ($*) and re-run"; exit 1
  fi
  if [ "$apt_updated" = 0 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null; apt_updated=1
  fi
  log "installing $*"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

port_open() { (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; }

url_host() { node -e 'const u=new URL(process.argv[1]);console.log(u.hostname||"127.0.0.1")' "$1"; }
url_port() { node -e 'const u=new URL(process.argv[1]);console.log(u.port||process.argv[2])' "$1" "$2"; }

pg_bindir() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1; }

# --- PostgreSQL -----------------------------------------------------------------
if [ -z "$(pg_bindir)" ] || ! command -v psql >/dev/null; then apt_install postgresql postgresql-client; fi
PG_HOST=$(url_host "$PG_URL"); PG_PORT=$(url_port "$PG_URL" 5432)
if ! port_open "$PG_HOST" "$PG_PORT"; then
  if [ -z "${DATABASE_URL:-}" ] && command -v pg_ctlcluster >/dev/null; then
    ver=$(ls /etc/postgresql | sort -V | tail -1)
    log "starting PostgreSQL $ver cluster"
    pg_ctlcluster --skip-systemctl-redirect "$ver" main start || true
  fi
  for _ in $(seq 1 30); do port_open "$PG_HOST" "$PG_PORT" && break; sleep 0.5; done
  port_open "$PG_HOST" "$PG_PORT" || { log "PostgreSQL not reachable at $PG_HOST:$PG_PORT"; exit 1; }
fi
log "PostgreSQL reachable at $PG_HOST:$PG_PORT"

# --- PgBouncer: the tests start throwaway ones in front of the local PostgreSQL ----
command -v pgbouncer >/dev/null || apt_install pgbouncer
log "PgBouncer: $(pgbouncer --version | head -1)"

# --- Redis ----------------------------------------------------------------------
command -v redis-server >/dev/null || apt_install redis-server
REDIS_HOST=$(url_host "$REDIS_URL_"); REDIS_PORT=$(url_port "$REDIS_URL_" 6379)
if ! port_open "$REDIS_HOST" "$REDIS_PORT"; then
  if [ -z "${REDIS_URL:-}" ]; then
    log "starting redis-server on $REDIS_PORT (no persistence)"
    mkdir -p /var/lib/redis /var/log/redis
    redis-server --daemonize yes --bind 127.0.0.1 -::1 --port "$REDIS_PORT" --save "" --appendonly no \
      --dir /var/lib/redis --logfile /var/log/redis/ci.log
  fi
  for _ in $(seq 1 30); do port_open "$REDIS_HOST" "$REDIS_PORT" && break; sleep 0.2; done
  port_open "$REDIS_HOST" "$REDIS_PORT" || { log "Redis not reachable at $REDIS_HOST:$REDIS_PORT"; exit 1; }
fi
log "Redis reachable at $REDIS_HOST:$REDIS_PORT"

# --- Chromium (Playwright drives Debian's headless shell; it cannot download its own) --
if [ "$NEED_CHROMIUM" = 1 ] && [ ! -x /usr/bin/chromium-headless-shell ]; then apt_install chromium-headless-shell fonts-dejavu-core; fi
[ "$NEED_CHROMIUM" = 1 ] && log "Chromium: $(/usr/bin/chromium-headless-shell --version 2>/dev/null || echo missing)"

# --- promtool (checks and unit-tests ops/alerts.yml); optional: without it that step is skipped --
if ! command -v promtool >/dev/null; then
  if [ "$(id -u)" = "0" ]; then apt_install prometheus; else log "promtool missing and not root: the alert rule tests will be skipped (apt-get install prometheus)"; fi
fi
command -v promtool >/dev/null && log "promtool: $(promtool --version 2>&1 | head -1)"

# --- A C compiler: the time-of-day tests build a small clock shim (test/support/clock-shift.c) --
if ! command -v cc >/dev/null || [ ! -f /usr/include/time.h ]; then apt_install gcc libc6-dev; fi
log "cc: $(cc --version | head -1)"
exit 0
