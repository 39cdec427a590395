import { createHash } from "node:crypto";
import { HOLD_HISTOGRAM_BOUNDS_MS, type LeaseEventKind } from "../types";

/** Event kinds with a stream of their own per bucket (see append_event). */
export const INDEXED_EVENT_KINDS: readonly LeaseEventKind[] = ["expired", "force_released", "renew_failed", "lost", "fencing_rejected"];

/**
 * Every Lua script of the Redis store. One script per operation: the state
 * change, its event(s) and its stats counters happen in one atomic step, on the
 * store's clock (`TIME` inside the script — client clocks are never used).
 *
 * Scripts return a JSON string (cjson) whose numbers are already formatted as
 * decimal strings, so nothing large passes through a Lua double → reply
 * conversion or exponent notation.
 *
 * Resource scripts share one KEYS/ARGV layout (see RESOURCE_KEYS / RESOURCE_ARGV
 * in store.ts):
 *   KEYS[1] lock   KEYS[2] lease  KEYS[3] ended  KEYS[4] fence  KEYS[5] evids
 *   KEYS[6] idx    KEYS[7] acq    KEYS[8] names  KEYS[9] events KEYS[10] stats prefix
 *   ARGV[1] resource  ARGV[2] events MAXLEN  ARGV[3] per-resource event id list length
 *   ARGV[4] the resource's first 3 `:` segments (contention stats; shallower depths derive from it)
 *   ARGV[5..] per script, documented on each constant.
 * The stats hashes (`<stats prefix>m:<minute>` / `h:<hour>`) and the per-kind
 * streams (`<events>:<kind>`) are derived inside the script; they carry the same
 * hash tag, so they live in the same cluster slot as the declared keys.
 */

export interface LuaScript {
  name: string;
  lua: string;
  sha: string;
}

function defineScript(name: string, body: string): LuaScript {
  const lua = `${PRELUDE}\n${body}`;
  return { name, lua, sha: createHash("sha1").update(lua).digest("hex") };
}

/** Shared helpers, prepended to every script. */
const PRELUDE = `
-- Redis < 5 replicates scripts verbatim, which forbids writes after TIME; effects replication fixes that (default since 5).
if redis.replicate_commands then pcall(redis.replicate_commands) end

local TIME = redis.call('TIME')
local NOW_US = tonumber(TIME[1]) * 1000000 + tonumber(TIME[2])
local NOW_MS = math.floor(NOW_US / 1000)

local HOLD_BOUNDS = { ${HOLD_HISTOGRAM_BOUNDS_MS.join(", ")} }
local MINUTE_TTL_S = 172800
local HOUR_TTL_S = 1296000
local FENCE_TTL_S = 31536000
local EVIDS_TTL_S = 1296000
local ENDED_GRACE_MS = 60000

local LEASE_FIELDS = { 'leaseId', 'owner', 'task', 'token', 'acquiredAt', 'expiresAt', 'ttlMs', 'renewedAt', 'renewals' }
local EVENT_FIELDS = { 'kind', 'resource', 'leaseId', 'owner', 'task', 'token', 'holdMs', 'actor', 'reason', 'detail' }
-- Kinds that are rare in a healthy system and that people filter on: each also gets a stream per bucket.
local INDEXED_KINDS = { ${INDEXED_EVENT_KINDS.map((k) => `${k} = true`).join(", ")} }

-- Integers as plain decimal strings: tostring() of a large double uses exponent notation.
local function fmt(n) return string.format('%.0f', n) end

local function resource_context()
  return {
    lock = KEYS[1], lease = KEYS[2], ended = KEYS[3], fence = KEYS[4], evids = KEYS[5],
    idx = KEYS[6], acq = KEYS[7], names = KEYS[8], events = KEYS[9], stats = KEYS[10],
    resource = ARGV[1], events_max = ARGV[2], evids_max = tonumber(ARGV[3]),
    contention_prefix = ARGV[4],
  }
end

local function read_lease(key)
  local v = redis.call('HMGET', key, unpack(LEASE_FIELDS))
  if not v[1] then return nil end
  local lease = {}
  for i, f in ipairs(LEASE_FIELDS) do lease[f] = v[i] or nil end
  return lease
end

-- Same bucketing as holdBucketIndex() in lib/lease/histogram.ts (0-based; #HOLD_BOUNDS is +Inf).
local function hold_bucket(ms)
  for i, bound in ipairs(HOLD_BOUNDS) do
    if ms <= bound then return i - 1 end
  end
  return #HOLD_BOUNDS
end

-- Rollups for the charts: per-minute and per-hour counters, written with the event.
local function count(c, kind, hold_ms)
  local keys = {
    c.stats .. 'm:' .. fmt(math.floor(NOW_MS / 60000)),
    c.stats .. 'h:' .. fmt(math.floor(NOW_MS / 3600000)),
  }
  for i, key in ipairs(keys) do
    -- The first count of a kind in an interval sets the key's TTL; later counts need not.
    local n = redis.call('HINCRBY', key, kind, 1)
    if hold_ms then
      redis.call('HINCRBY', key, 'hist:' .. hold_bucket(hold_ms), 1)
      redis.call('HINCRBY', key, 'holdSum', fmt(hold_ms))
    end
    -- Only the 3-segment prefix is counted: depths 1 and 2 are sums over it, done on read.
    if kind == 'contended' and c.contention_prefix then
      redis.call('HINCRBY', key, 'cp:' .. c.contention_prefix, 1)
    end
    if n == 1 then redis.call('EXPIRE', key, i == 1 and MINUTE_TTL_S or HOUR_TTL_S) end
  end
end

-- Appends to the bucket stream (capped), notes the id in the resource's history list and,
-- for indexed kinds, copies the entry under the same id to the bucket's stream for that kind.
-- The id's ms part is the event time: we ask for <NOW_MS>-*; if the stream's last id is
-- already ahead (the clock stepped back), Redis picks the next id instead, so ids stay ordered.
local function append_event(c, ev)
  local fields = {}
  for _, f in ipairs(EVENT_FIELDS) do
    local v = ev[f]
    if v ~= nil and v ~= false then
      fields[#fields + 1] = f
      fields[#fields + 1] = v
    end
  end
  local id = redis.pcall('XADD', c.events, 'MAXLEN', '~', c.events_max, fmt(NOW_MS) .. '-*', unpack(fields))
  if type(id) ~= 'string' then
    id = redis.call('XADD', c.events, 'MAXLEN', '~', c.events_max, '*', unpack(fields))
  end
  -- A list of ids per resource (~100 bytes) rather than a stream per resource (~4 KB each).
  -- Trimmed once it is over length; its TTL is refreshed every 16 events, not on each one.
  local length = redis.call('LPUSH', c.evids, id)
  if length > c.evids_max then redis.call('LTRIM', c.evids, 0, c.evids_max - 1) end
  if length % 16 == 1 then redis.call('EXPIRE', c.evids, EVIDS_TTL_S) end
  if INDEXED_KINDS[ev.kind] then
    local kind_key = c.events .. ':' .. ev.kind
    local copied = redis.pcall('XADD', kind_key, 'MAXLEN', '~', c.events_max, id, unpack(fields))
    if type(copied) ~= 'string' then
      redis.call('XADD', kind_key, 'MAXLEN', '~', c.events_max, '*', unpack(fields))
    end
  end
  ev.id = id
  return ev
end

-- Ends the lease described by \`lease\`: drops its state and index entries, remembers an expiry
-- or force-release (so a late renew/release by its holder gets "expired" rather than
-- "not_owner", and its renew_failed event still names the owner), records the terminal event
-- with holdMs and counts it. A plain release leaves no note: its holder knows it let go.
-- Callers only get here when the lock key holds this lease id or is already gone, so the DEL
-- never removes someone else's lock.
local function end_lease(c, lease, kind, hold_ms, extra)
  redis.call('DEL', c.lock, c.lease)
  redis.call('ZREM', c.idx, c.resource)
  redis.call('ZREM', c.acq, c.resource)
  redis.call('ZREM', c.names, c.resource)
  if kind ~= 'released' then
    redis.call('HSET', c.ended, 'leaseId', lease.leaseId, 'how', kind, 'owner', lease.owner or '', 'task', lease.task or '', 'token', lease.token or '')
    redis.call('PEXPIRE', c.ended, fmt((tonumber(lease.ttlMs) or 0) + ENDED_GRACE_MS))
  end
  local ev = {
    kind = kind, resource = c.resource, leaseId = lease.leaseId, owner = lease.owner,
    task = lease.task, token = lease.token, holdMs = fmt(hold_ms),
  }
  if extra then for k, v in pairs(extra) do ev[k] = v end end
  append_event(c, ev)
  count(c, kind, hold_ms)
  return ev
end

-- A lapsed lease held from acquiredAt to expiresAt (its TTL, on this clock, is the end).
local function lapsed_hold_ms(lease)
  return math.max(0, (tonumber(lease.expiresAt) or NOW_MS) - (tonumber(lease.acquiredAt) or NOW_MS))
end

local function record_expiry(c, lease)
  return end_lease(c, lease, 'expired', lapsed_hold_ms(lease))
end
`;

/**
 * acquire. ARGV[5] owner, ARGV[6] task, ARGV[7] ttlMs, ARGV[8] new leaseId.
 * Returns {status:"acquired", lease, tookOverExpired} or {status:"held", holder}.
 */
export const ACQUIRE_SCRIPT = defineScript(
  "acquire",
  `
local c = resource_context()
local owner, task, ttl, lease_id = ARGV[5], ARGV[6], tonumber(ARGV[7]), ARGV[8]

local holder_id = redis.call('GET', c.lock)
if holder_id then
  local h = read_lease(c.lease) or {}
  local expires = h.expiresAt
  if not expires then expires = fmt(NOW_MS + math.max(0, redis.call('PTTL', c.lock))) end
  -- contended: owner/task name the requester; leaseId/token are the holder's.
  append_event(c, {
    kind = 'contended', resource = c.resource, leaseId = holder_id, owner = owner, task = task,
    token = h.token, detail = cjson.encode({ holderOwner = h.owner, holderTask = h.task }),
  })
  count(c, 'contended')
  return cjson.encode({
    status = 'held',
    holder = { leaseId = holder_id, owner = h.owner or '', task = h.task or '', token = h.token or '0', expiresAt = expires },
  })
end

local old = read_lease(c.lease)
if old then
  -- The lock's TTL ran out but nobody recorded it yet. Record the expiry here; its
  -- metadata is deleted in this same atomic step, so sweep cannot record it twice.
  record_expiry(c, old)
end

-- Fencing token = max(last token for this resource + 1, store clock in microseconds).
-- The counter alone would restart after FLUSHALL or a restart without persistence; the
-- clock floor keeps tokens increasing across that: every token ever issued was at most the
-- store clock (in µs) of the script that issued it — scripts run one at a time and each
-- takes more than 1 µs, so last + 1 never outruns the clock — and the clock has moved on
-- since. This relies on the Redis host clock not stepping backwards (NTP slews, it doesn't
-- step). µs since 1970 is ~1.7e15 < 2^53, so the double is exact.
local last = tonumber(redis.call('GET', c.fence) or '0') or 0
local token = fmt(math.max(last + 1, NOW_US))
redis.call('SET', c.fence, token, 'EX', FENCE_TTL_S)

-- The PX on the lock key is the enforcement; the hash is bookkeeping without a TTL.
local expires = fmt(NOW_MS + ttl)
local now = fmt(NOW_MS)
redis.call('SET', c.lock, lease_id, 'PX', ttl)
redis.call('HSET', c.lease,
  'leaseId', lease_id, 'owner', owner, 'task', task, 'token', token, 'acquiredAt', now,
  'expiresAt', expires, 'ttlMs', fmt(ttl), 'renewedAt', now, 'renewals', '0')
redis.call('ZADD', c.idx, expires, c.resource)
redis.call('ZADD', c.acq, now, c.resource)
redis.call('ZADD', c.names, 0, c.resource)

append_event(c, {
  kind = 'acquired', resource = c.resource, leaseId = lease_id, owner = owner, task = task, token = token,
})
count(c, 'acquired')
return cjson.encode({
  status = 'acquired', tookOverExpired = old ~= nil,
  lease = {
    leaseId = lease_id, owner = owner, task = task, token = token, acquiredAt = now,
    expiresAt = expires, ttlMs = fmt(ttl), renewedAt = now, renewals = '0',
  },
})
`,
);

/**
 * renew. ARGV[5] leaseId, ARGV[6] ttlMs.
 * Returns {status:"renewed", expiresAt, renewals} or {status:"refused", reason, events}.
 */
export const RENEW_SCRIPT = defineScript(
  "renew",
  `
local c = resource_context()
local lease_id, ttl = ARGV[5], tonumber(ARGV[6])

local holder_id = redis.call('GET', c.lock)
if holder_id == lease_id then
  local expires = fmt(NOW_MS + ttl)
  redis.call('PEXPIRE', c.lock, ttl)
  redis.call('HSET', c.lease, 'expiresAt', expires, 'ttlMs', fmt(ttl), 'renewedAt', fmt(NOW_MS))
  local renewals = redis.call('HINCRBY', c.lease, 'renewals', 1)
  redis.call('ZADD', c.idx, expires, c.resource)
  -- Renewals are counted, not stored as events.
  count(c, 'renewed')
  return cjson.encode({ status = 'renewed', expiresAt = expires, renewals = fmt(renewals) })
end

local events = {}
local reason = 'not_owner'
local known = nil
if not holder_id then
  local lease = read_lease(c.lease)
  if lease and lease.leaseId == lease_id then
    -- Its own lease lapsed and is not swept yet: record the expiry now (exactly once).
    events[#events + 1] = record_expiry(c, lease)
    reason = 'expired'
    known = lease
  end
end
if not known then
  local e = redis.call('HMGET', c.ended, 'leaseId', 'how', 'owner', 'task', 'token')
  if e[1] == lease_id then
    known = { owner = e[3], task = e[4], token = e[5] }
    -- "expired" only while nobody else holds it; a new holder makes it "not_owner".
    if e[2] == 'expired' and not holder_id then reason = 'expired' end
  end
end
known = known or {}
events[#events + 1] = append_event(c, {
  kind = 'renew_failed', resource = c.resource, leaseId = lease_id,
  owner = known.owner ~= '' and known.owner or nil, task = known.task ~= '' and known.task or nil,
  token = known.token ~= '' and known.token or nil, reason = reason,
})
count(c, 'renew_failed')
return cjson.encode({ status = 'refused', reason = reason, events = events })
`,
);

/**
 * release. ARGV[5] leaseId.
 * Returns {status:"released", holdMs, events} or {status:"refused", reason, events}.
 */
export const RELEASE_SCRIPT = defineScript(
  "release",
  `
local c = resource_context()
local lease_id = ARGV[5]

local holder_id = redis.call('GET', c.lock)
if holder_id == lease_id then
  local lease = read_lease(c.lease) or { leaseId = lease_id, acquiredAt = fmt(NOW_MS) }
  local hold = math.max(0, NOW_MS - (tonumber(lease.acquiredAt) or NOW_MS))
  local ev = end_lease(c, lease, 'released', hold)
  return cjson.encode({ status = 'released', holdMs = fmt(hold), events = { ev } })
end

if not holder_id then
  local lease = read_lease(c.lease)
  if lease and lease.leaseId == lease_id then
    -- Released too late: the TTL already ended it. Record that expiry (exactly once).
    local ev = record_expiry(c, lease)
    return cjson.encode({ status = 'refused', reason = 'expired', events = { ev } })
  end
  local e = redis.call('HMGET', c.ended, 'leaseId', 'how')
  if e[1] == lease_id and e[2] == 'expired' then
    return cjson.encode({ status = 'refused', reason = 'expired', events = {} })
  end
end
return cjson.encode({ status = 'refused', reason = 'not_owner', events = {} })
`,
);

/**
 * forceRelease. ARGV[5] leaseId, ARGV[6] actor, ARGV[7] reason.
 * Returns {status:"released", holdMs, lease, events} | {status:"lease_changed", current, events}
 * | {status:"not_found", events}.
 */
export const FORCE_RELEASE_SCRIPT = defineScript(
  "forceRelease",
  `
local c = resource_context()
local lease_id, actor, reason = ARGV[5], ARGV[6], ARGV[7]

local holder_id = redis.call('GET', c.lock)
if holder_id == lease_id then
  local lease = read_lease(c.lease) or { leaseId = lease_id, acquiredAt = fmt(NOW_MS) }
  local hold = math.max(0, NOW_MS - (tonumber(lease.acquiredAt) or NOW_MS))
  local ev = end_lease(c, lease, 'force_released', hold, { actor = actor, reason = reason })
  return cjson.encode({ status = 'released', holdMs = fmt(hold), lease = lease, events = { ev } })
end
if holder_id then
  return cjson.encode({ status = 'lease_changed', current = read_lease(c.lease), events = {} })
end
-- Nothing holds it. A lapsed, unswept lease is recorded as expired on the way.
local events = {}
local lapsed = read_lease(c.lease)
if lapsed then events[1] = record_expiry(c, lapsed) end
return cjson.encode({ status = 'not_found', events = events })
`,
);

/**
 * reportFencingRejection. ARGV[5] stale token, ARGV[6] seen token, ARGV[7] by,
 * ARGV[8] owner, ARGV[9] task, ARGV[10] leaseId ("" when unknown).
 */
export const FENCING_REJECTED_SCRIPT = defineScript(
  "reportFencingRejection",
  `
local c = resource_context()
local function opt(v) if v == '' then return nil end return v end
local ev = append_event(c, {
  kind = 'fencing_rejected', resource = c.resource, leaseId = opt(ARGV[10]), owner = opt(ARGV[8]),
  task = opt(ARGV[9]), token = ARGV[5], detail = cjson.encode({ seenToken = ARGV[6], by = ARGV[7] }),
})
count(c, 'fencing_rejected')
return cjson.encode({ status = 'recorded', events = { ev } })
`,
);

/** reportLost. ARGV[5] leaseId, ARGV[6] owner, ARGV[7] task, ARGV[8] token, ARGV[9] reason. */
export const LOST_SCRIPT = defineScript(
  "reportLost",
  `
local c = resource_context()
local ev = append_event(c, {
  kind = 'lost', resource = c.resource, leaseId = ARGV[5], owner = ARGV[6], task = ARGV[7],
  token = ARGV[8], reason = ARGV[9],
})
count(c, 'lost')
return cjson.encode({ status = 'recorded', events = { ev } })
`,
);

/**
 * sweep, one bucket.
 * KEYS[1] idx, KEYS[2] acq, KEYS[3] names, KEYS[4] events, KEYS[5] stats prefix,
 * KEYS[6] bucket base `<ns>:{b<n>}:` (per-resource keys derive from it — same hash tag).
 * ARGV[1] events MAXLEN, ARGV[2] per-resource event id list length, ARGV[3] batch size.
 * Returns {status:"swept", expired, scanned}.
 */
export const SWEEP_SCRIPT = defineScript(
  "sweep",
  `
local base = KEYS[6]
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', fmt(NOW_MS), 'LIMIT', 0, tonumber(ARGV[3]))
local expired = 0
for _, resource in ipairs(due) do
  local c = {
    lock = base .. 'lock:' .. resource, lease = base .. 'lease:' .. resource,
    ended = base .. 'ended:' .. resource, evids = base .. 'evids:' .. resource,
    idx = KEYS[1], acq = KEYS[2], names = KEYS[3], events = KEYS[4], stats = KEYS[5],
    resource = resource, events_max = ARGV[1], evids_max = tonumber(ARGV[2]),
  }
  -- A lock key still present was renewed or expires within this millisecond: not ours to record.
  if redis.call('EXISTS', c.lock) == 0 then
    local lease = read_lease(c.lease)
    if lease then
      record_expiry(c, lease)
      expired = expired + 1
    else
      redis.call('ZREM', c.idx, resource)
      redis.call('ZREM', c.acq, resource)
      redis.call('ZREM', c.names, resource)
    end
  end
end
return cjson.encode({ status = 'swept', expired = expired, scanned = #due })
`,
);

export const ALL_SCRIPTS: readonly LuaScript[] = [
  ACQUIRE_SCRIPT,
  RENEW_SCRIPT,
  RELEASE_SCRIPT,
  FORCE_RELEASE_SCRIPT,
  FENCING_REJECTED_SCRIPT,
  LOST_SCRIPT,
  SWEEP_SCRIPT,
];
