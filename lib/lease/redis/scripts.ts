import { createHash } from "node:crypto";
import { HOLD_HISTOGRAM_BOUNDS_MS, SLACK_BUCKET_COUNT, type LeaseEventKind } from "../types";

/** Event kinds with a stream of their own per bucket (see append_event). */
export const INDEXED_EVENT_KINDS: readonly LeaseEventKind[] = ["expired", "force_released", "renew_failed", "lost", "fencing_rejected"];

/** Key lifetimes in seconds: minute / hour stats hashes, fencing token, per-resource event id list. */
export const MINUTE_TTL_S = 172_800;
export const HOUR_TTL_S = 1_296_000;
export const FENCE_TTL_S = 31_536_000;
export const EVIDS_TTL_S = 1_296_000;
/** Renewal-slack hashes (one per bucket and hour) live as long as the hour stats: 15 days. */
export const SLACK_TTL_S = 1_296_000;
/** Closed minutes folded into hours at most per write (the first of each minute) and per sweep call, per bucket. */
export const FOLD_PER_WRITE = 4;
export const FOLD_PER_SWEEP = 120;

/**
 * The Lua of the Redis store: one script per operation, loaded once and run by
 * SHA (EVALSHA; after NOSCRIPT — a restart, SCRIPT FLUSH — it is sent again, see
 * callScript in connection.ts). Each script makes the state change, records its
 * event(s) and bumps its stats counters in one atomic step, on the store's clock
 * (`TIME` inside the script — client clocks are never used). Redis ≥ 7 (`SET … NX
 * GET`, `XADD <ms>-*`).
 *
 * Every script is the shared top (constants and helpers) followed by its body.
 * Redis compiles a script once, but re-runs its top on every call, so the helpers
 * are kept to plain locals and small tables.
 *
 * Cost model (what the scripts are shaped by): Redis CPU per call is a small
 * base plus, per `redis.call`, the command itself and ~0.3 µs (read) to ~0.7 µs
 * (write) of call overhead, and Lua turning numbers into strings is a `sprintf`
 * each. So the hot paths make as few calls as the invariants allow, pass
 * strings (not numbers) to Redis, and build each decimal string once.
 *
 * Replies are flat arrays of strings, never JSON: `[status, …]` as documented on
 * each script. An event in a reply is `[id, field, value, field, value, …]` —
 * the stream entry it was written as, with its id in front.
 *
 * Every script is given one key, its bucket's base `<ns>:{b<n>}:` (keys.ts), and
 * derives the keys it touches from it — `<base>lock:<resource>`, `<base>idx`, … —
 * so all of them carry the base's hash tag and live in the one cluster slot that
 * KEYS names. (Passing ten long key names per call cost more on the client and in
 * Redis' request parsing than deriving them in Lua.) Resource scripts share:
 *   KEYS[1] bucket base
 *   ARGV[1] resource  ARGV[2] events MAXLEN  ARGV[3] per-resource event id list length
 *   ARGV[4..] per script, documented on each.
 */

/** One operation's body: it runs after start(), so KEYS, ARGV and NOW are set. */
interface ScriptBody {
  operation: LeaseOperation;
  body: string;
}

export type LeaseOperation = "acquire" | "renew" | "release" | "forceRelease" | "reportFencingRejection" | "reportLost" | "sweep";

function defineScript(operation: LeaseOperation, body: string): ScriptBody {
  return { operation, body };
}

/** holdBucketIndex() of lib/lease/histogram.ts as an if-chain, returning the index as the text the field name needs. */
const HOLD_BUCKET_LUA = [
  ...HOLD_HISTOGRAM_BOUNDS_MS.map((bound, i) => `${i === 0 ? "if" : "elseif"} ms <= ${bound} then return '${i}'`),
  `end`,
  `return '${HOLD_HISTOGRAM_BOUNDS_MS.length}'`,
].join("\n  ");

/**
 * Renewal slack (see lib/lease/slack.ts), counted inside renew before the lease hash is
 * updated: the share of the old TTL left on this clock, in SLACK_BUCKET_COUNT buckets
 * (slackBucketIndex), into field '<old ttl>|<bucket>|<group>' of KEYS[2]. Self-contained:
 * one read of the old expiry and TTL, one HINCRBY, and the key's TTL set by the first count.
 */
const RENEWAL_SLACK_LUA = `
  local slack_was = redis.call('HMGET', c.lease, 'expiresAt', 'ttlMs')
  local slack_ttl = tonumber(slack_was[2])
  if slack_ttl and slack_ttl > 0 and KEYS[2] then
    local slack_i = math.floor(((tonumber(slack_was[1]) or NOW_MS) - NOW_MS) * ${SLACK_BUCKET_COUNT} / slack_ttl)
    slack_i = math.max(0, math.min(${SLACK_BUCKET_COUNT - 1}, slack_i))
    if redis.call('HINCRBY', KEYS[2], slack_was[2] .. '|' .. slack_i .. '|' .. ARGV[6], '1') == 1 then
      redis.call('EXPIRE', KEYS[2], '${SLACK_TTL_S}')
    end
  end`;

/**
 * The shared top of every script: constants and helpers. The per-call state lives in
 * locals that start() sets from the script's KEYS and ARGV at the beginning of the call.
 */
const LIBRARY_TOP = `
local KEYS, ARGV, TIME, NOW_US, NOW_MS, NOW, NOW_US_TEXT, MINUTE

local function start(keys, args)
  KEYS, ARGV = keys, args
  TIME = redis.call('TIME')
  NOW_US = tonumber(TIME[1]) * 1000000 + tonumber(TIME[2])
  NOW_MS = math.floor(NOW_US / 1000)
  -- Decimal strings, each made once. Millisecond values (< 1e14) print exactly with tostring
  -- ('%.14g'); the 16-digit microsecond clock would not, so it is spliced from TIME's own digits.
  NOW = tostring(NOW_MS)
  NOW_US_TEXT = TIME[1] .. string.sub('00000' .. TIME[2], -6)
  MINUTE = tostring(math.floor(NOW_MS / 60000))
end

local MINUTE_TTL_S = '${MINUTE_TTL_S}'
local HOUR_TTL_S = '${HOUR_TTL_S}'
local FENCE_TTL_S = '${FENCE_TTL_S}'
local EVIDS_TTL_S = '${EVIDS_TTL_S}'
local ENDED_GRACE_MS = 60000
local FOLD_PER_WRITE = ${FOLD_PER_WRITE}
local FOLD_PER_SWEEP = ${FOLD_PER_SWEEP}

-- Kinds that are rare in a healthy system and that people filter on: each also gets a stream per bucket.
local INDEXED_KINDS = { ${INDEXED_EVENT_KINDS.map((k) => `${k} = true`).join(", ")} }

-- The keys of one resource and of its bucket (same names as keys.ts builds), and the limits.
local function context(base, resource, events_max, evids_max)
  return {
    lock = base .. 'lock:' .. resource, lease = base .. 'lease:' .. resource, ended = base .. 'ended:' .. resource,
    fence = base .. 'fence:' .. resource, evids = base .. 'evids:' .. resource,
    idx = base .. 'idx', acq = base .. 'acq', names = base .. 'names', events = base .. 'events', stats = base .. 'stats:',
    totals = base .. 'totals',
    resource = resource, events_max = events_max, evids_max = tonumber(evids_max),
  }
end

local function resource_context()
  return context(KEYS[1], ARGV[1], ARGV[2], ARGV[3])
end

-- Appends field, value to a flat list unless the value is missing (nil or false).
local function put(list, field, value)
  if value then
    list[#list + 1] = field
    list[#list + 1] = value
  end
end

-- The lease hash as a table (nil when there is none) and as HGETALL's flat reply.
local function read_lease(key)
  local flat = redis.call('HGETALL', key)
  local lease = {}
  for i = 1, #flat, 2 do lease[flat[i]] = flat[i + 1] end
  if not lease.leaseId then return nil end
  return lease, flat
end

-- Same bucketing as holdBucketIndex() in lib/lease/histogram.ts (0-based; the last is +Inf).
local function hold_bucket(ms)
  ${HOLD_BUCKET_LUA}
end

-- The first 3 ':'-separated segments, exactly like resourcePrefix(resource, 3) in validation.ts.
local function contention_prefix(resource)
  local at = 0
  for _ = 1, 3 do
    at = string.find(resource, ':', at + 1, true)
    if not at then return resource end
  end
  return string.sub(resource, 1, at - 1)
end

-- Hour rollups are folded from closed minutes rather than written with every event (that
-- doubled the counter writes of every operation). A minute hash written by these scripts
-- carries the field 'fold' until its counters have been added to its hour's hash, and its
-- minute is in the bucket's zset <stats>pending; the fold adds the counters, removes the mark
-- and the zset entry in one atomic step, so each minute reaches its hour exactly once whoever
-- folds it (the first write of each new minute, or sweep), and a reader adds the minutes still
-- marked. The zset holds only minutes that had writes, so a bucket left idle for days has no
-- empty minutes to walk, and each call folds at most \`limit\` of them: no script does unbounded
-- work; sweep catches up on a backlog. Returns how many minutes it looked at.
local function fold_minutes(stats, up_to, limit)
  local pending_key = stats .. 'pending'
  local due = redis.call('ZRANGEBYSCORE', pending_key, '-inf', tostring(up_to), 'LIMIT', '0', tostring(limit))
  for _, m in ipairs(due) do
    local key = stats .. 'm:' .. m
    local flat = redis.call('HGETALL', key)
    local is_marked = false
    for i = 1, #flat, 2 do
      if flat[i] == 'fold' then is_marked = true break end
    end
    if is_marked then
      local hour_key = stats .. 'h:' .. math.floor(tonumber(m) / 60)
      for i = 1, #flat, 2 do
        if flat[i] ~= 'fold' then redis.call('HINCRBY', hour_key, flat[i], flat[i + 1]) end
      end
      redis.call('EXPIRE', hour_key, HOUR_TTL_S)
      redis.call('HDEL', key, 'fold')
    end
    redis.call('ZREM', pending_key, m)
  end
  return #due
end

-- Lifetime counters per bucket, no TTL: what conservation is checked against once the capped
-- streams and expiring stats have dropped old history (acquired = ended + held).
local LIFETIME_KINDS = { acquired = true, released = true, expired = true, force_released = true }

-- Rollups for the charts, per minute, written with the event. A terminal event counts into
-- '<kind>:h<hold bucket>' — its kind's count and the hold histogram in one field — plus holdSum.
local function count(c, kind, hold_ms)
  local key = c.stats .. 'm:' .. MINUTE
  local field = kind
  if hold_ms then
    field = kind .. ':h' .. hold_bucket(hold_ms)
    redis.call('HINCRBY', key, 'holdSum', tostring(hold_ms))
  end
  if redis.call('HINCRBY', key, field, '1') == 1 then
    -- The first count of a field in a minute sets the key's TTL; later counts need not. The
    -- first count in the minute at all marks it for folding and folds (some of) the minutes before it.
    redis.call('EXPIRE', key, MINUTE_TTL_S)
    if redis.call('HSETNX', key, 'fold', '1') == 1 then
      local pending_key = c.stats .. 'pending'
      redis.call('ZADD', pending_key, MINUTE, MINUTE)
      redis.call('EXPIRE', pending_key, MINUTE_TTL_S)
      fold_minutes(c.stats, tonumber(MINUTE) - 1, FOLD_PER_WRITE)
    end
  end
  redis.call('HINCRBY', c.totals, field, '1') if hold_ms then redis.call('HINCRBY', c.totals, 'holdSum', tostring(hold_ms)) end
  -- Only the 3-segment prefix is counted: depths 1 and 2 are sums over it, done on read.
  if kind == 'contended' then redis.call('HINCRBY', key, 'cp:' .. contention_prefix(c.resource), '1') end
end

-- Appends the event \`ev\` — a flat list { '', 'kind', kind, field, value, … } whose first slot is
-- kept for the id — to the bucket stream (capped), notes the id in the resource's history list
-- and, for indexed kinds, copies the entry under the same id to the bucket's stream for that kind.
-- The id's ms part is the event time: we ask for <NOW>-*; if the stream's last id is already
-- ahead (the clock stepped back), Redis refuses it and we take the next id instead, so ids stay
-- ordered. pcall, because a refused command inside call() would abort the call half-written.
local function append_event(c, kind, ev)
  local id = redis.pcall('XADD', c.events, 'MAXLEN', '~', c.events_max, NOW .. '-*', unpack(ev, 2))
  if type(id) ~= 'string' then
    id = redis.call('XADD', c.events, 'MAXLEN', '~', c.events_max, '*', unpack(ev, 2))
  end
  ev[1] = id
  -- A list of ids per resource (~100 bytes) rather than a stream per resource (~4 KB each).
  -- Trimmed back to its length once it is a little over (one LTRIM per many events, not one
  -- per event); its TTL is refreshed every 16 events, which the overshoot always spans.
  local length = redis.call('LPUSH', c.evids, id)
  if length > c.evids_max + math.max(16, math.floor(c.evids_max / 16)) then
    redis.call('LTRIM', c.evids, 0, c.evids_max - 1)
  end
  if length % 16 == 1 then redis.call('EXPIRE', c.evids, EVIDS_TTL_S) end
  if INDEXED_KINDS[kind] then
    local kind_key = c.events .. ':' .. kind
    local copied = redis.pcall('XADD', kind_key, 'MAXLEN', '~', c.events_max, id, unpack(ev, 2))
    if type(copied) ~= 'string' then
      redis.call('XADD', kind_key, 'MAXLEN', '~', c.events_max, '*', unpack(ev, 2))
    end
  end
  return ev
end

-- Ends the lease described by \`lease\`: drops its state and index entries, records the
-- terminal event with holdMs, counts it, and remembers in <ended> how it ended. That note
-- lets a late renew/release by its holder get "expired" rather than "not_owner" (and its
-- renew_failed event still name the owner), and lets the same release or force-release call
-- (same \`call_id\`: sent again because its reply was lost) answer what it did the first time
-- instead of running again; another call for that lease id is refused as before.
-- \`lease_flat\`: the lease hash as HGETALL gave it, kept for a repeated force-release's reply.
-- \`is_held\`: the lock key still holds this lease id (release, force-release) and is deleted
-- with it. Otherwise the lock's TTL already removed it — or, on an acquire that takes over a
-- lapsed lease, it is the new holder's — so it is left alone; no path deletes another's lock.
local function end_lease(c, lease, kind, hold_ms, is_held, actor, reason, call_id, lease_flat, detail)
  if is_held then redis.call('DEL', c.lock, c.lease) else redis.call('DEL', c.lease) end
  redis.call('ZREM', c.idx, c.resource)
  redis.call('ZREM', c.acq, c.resource)
  redis.call('ZREM', c.names, c.resource)
  local hold = tostring(hold_ms)
  local ev = { '', 'kind', kind, 'resource', c.resource }
  put(ev, 'leaseId', lease.leaseId)
  put(ev, 'owner', lease.owner)
  put(ev, 'task', lease.task)
  put(ev, 'token', lease.token)
  put(ev, 'holdMs', hold)
  put(ev, 'actor', actor)
  put(ev, 'reason', reason)
  put(ev, 'detail', detail)
  append_event(c, kind, ev)
  count(c, kind, hold_ms)
  if lease_flat then
    redis.call('HSET', c.ended, 'leaseId', lease.leaseId, 'how', kind, 'owner', lease.owner or '', 'task', lease.task or '',
      'token', lease.token or '', 'holdMs', hold, 'eventId', ev[1], 'callId', call_id or '',
      'lease', cjson.encode(lease_flat), 'event', cjson.encode(ev))
  else
    redis.call('HSET', c.ended, 'leaseId', lease.leaseId, 'how', kind, 'owner', lease.owner or '', 'task', lease.task or '',
      'token', lease.token or '', 'holdMs', hold, 'eventId', ev[1], 'callId', call_id or '')
  end
  redis.call('PEXPIRE', c.ended, tostring((tonumber(lease.ttlMs) or 0) + ENDED_GRACE_MS))
  return ev
end

-- A lapsed lease held from acquiredAt to expiresAt (its TTL, on this clock, is the end).
-- \`by\` names the operation that recorded it; the detail is the one Postgres writes for an expiry.
local function record_expiry(c, lease, by)
  local hold = math.max(0, (tonumber(lease.expiresAt) or NOW_MS) - (tonumber(lease.acquiredAt) or NOW_MS))
  local detail = cjson.encode({ renewals = tonumber(lease.renewals) or 0, expiredAt = lease.expiresAt, recordedBy = by })
  return end_lease(c, lease, 'expired', hold, false, nil, nil, nil, nil, detail)
end
`;

/**
 * acquire. ARGV[4] owner, ARGV[5] task, ARGV[6] ttlMs, ARGV[7] new leaseId.
 * Returns ["acquired", tookOverExpired "1"|"0", token, acquiredAt, expiresAt]
 * or ["held", holder leaseId, owner, task, token, expiresAt].
 */
const ACQUIRE = defineScript(
  "acquire",
  `
local c = resource_context()
local owner, task, ttl, lease_id = ARGV[4], ARGV[5], ARGV[6], ARGV[7]

-- One call takes a free lock or, if it is taken, names its holder (and changes nothing).
-- The PX on the lock key is the enforcement; the lease hash is bookkeeping without a TTL.
local holder_id = redis.call('SET', c.lock, lease_id, 'NX', 'PX', ttl, 'GET')
if holder_id == lease_id then
  -- This very lease already holds it: the same acquire ran before (retried after its reply
  -- was lost). Answer as it did, and record nothing twice.
  local h = redis.call('HMGET', c.lease, 'token', 'acquiredAt', 'expiresAt')
  return { 'acquired', '0', h[1] or '0', h[2] or NOW, h[3] or NOW }
end
if holder_id then
  local h = redis.call('HMGET', c.lease, 'owner', 'task', 'token', 'expiresAt')
  local expires = h[4] or tostring(NOW_MS + math.max(0, redis.call('PTTL', c.lock)))
  -- contended: owner/task name the requester; leaseId/token are the holder's.
  local ev = { '', 'kind', 'contended', 'resource', c.resource, 'leaseId', holder_id, 'owner', owner, 'task', task }
  put(ev, 'token', h[3])
  put(ev, 'detail', cjson.encode({ holderOwner = h[1] or nil, holderTask = h[2] or nil }))
  append_event(c, 'contended', ev)
  count(c, 'contended')
  return { 'held', holder_id, h[1] or '', h[2] or '', h[3] or '0', expires }
end

local old = read_lease(c.lease)
if old then
  -- The lock's TTL ran out but nobody recorded it yet. Record the expiry here; its
  -- metadata is deleted in this same atomic step, so sweep cannot record it twice.
  record_expiry(c, old, 'acquire')
end

-- Fencing token = max(last token for this resource + 1, store clock in microseconds).
-- The counter alone would restart after FLUSHALL or a restart without persistence; the
-- clock floor keeps tokens increasing across that: every token ever issued was at most the
-- store clock (in µs) of the call that issued it — calls run one at a time and each
-- takes more than 1 µs, so last + 1 never outruns the clock — and the clock has moved on
-- since. This relies on the Redis host clock not stepping backwards (NTP slews, it doesn't
-- step). So the clock is the token, and one SET … GET both writes it and reads the last one
-- to check; only if the clock did step back is the token last + 1, written again.
-- µs since 1970 is ~1.7e15 < 2^53, so the doubles compared here are exact.
local token = NOW_US_TEXT
local last = redis.call('SET', c.fence, token, 'EX', FENCE_TTL_S, 'GET')
if last and (tonumber(last) or 0) >= NOW_US then
  token = string.format('%.0f', tonumber(last) + 1)
  redis.call('SET', c.fence, token, 'EX', FENCE_TTL_S)
end

local expires = tostring(NOW_MS + tonumber(ttl))
redis.call('HSET', c.lease,
  'leaseId', lease_id, 'owner', owner, 'task', task, 'token', token, 'acquiredAt', NOW,
  'expiresAt', expires, 'ttlMs', ttl, 'renewedAt', NOW, 'renewals', '0')
redis.call('ZADD', c.idx, expires, c.resource)
redis.call('ZADD', c.acq, NOW, c.resource)
redis.call('ZADD', c.names, '0', c.resource)

append_event(c, 'acquired', { '', 'kind', 'acquired', 'resource', c.resource, 'leaseId', lease_id, 'owner', owner, 'task', task, 'token', token })
count(c, 'acquired')
return { 'acquired', old and '1' or '0', token, NOW, expires }
`,
);

/**
 * renew. ARGV[4] leaseId, ARGV[5] ttlMs, ARGV[6] the resource's slack group (slackGroupOf);
 * KEYS[2] the bucket's renewal-slack hash for the hour (buildSlackKey).
 * Returns ["renewed", expiresAt, renewals] or ["refused", reason, events].
 */
const RENEW = defineScript(
  "renew",
  `
local c = resource_context()
local lease_id, ttl = ARGV[4], ARGV[5]

local holder_id = redis.call('GET', c.lock)
if holder_id == lease_id then
${RENEWAL_SLACK_LUA}
  local expires = tostring(NOW_MS + tonumber(ttl))
  redis.call('PEXPIRE', c.lock, ttl)
  redis.call('HSET', c.lease, 'expiresAt', expires, 'ttlMs', ttl, 'renewedAt', NOW)
  local renewals = redis.call('HINCRBY', c.lease, 'renewals', '1')
  redis.call('ZADD', c.idx, expires, c.resource)
  -- Renewals are counted, not stored as events.
  count(c, 'renewed')
  return { 'renewed', expires, tostring(renewals) }
end

local events = {}
local reason = 'not_owner'
local known = nil
if not holder_id then
  local lease = read_lease(c.lease)
  if lease and lease.leaseId == lease_id then
    -- Its own lease lapsed and is not swept yet: record the expiry now (exactly once).
    events[#events + 1] = record_expiry(c, lease, 'renew')
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
local ev = { '', 'kind', 'renew_failed', 'resource', c.resource, 'leaseId', lease_id }
put(ev, 'owner', known.owner ~= '' and known.owner)
put(ev, 'task', known.task ~= '' and known.task)
put(ev, 'token', known.token ~= '' and known.token)
put(ev, 'reason', reason)
events[#events + 1] = append_event(c, 'renew_failed', ev)
count(c, 'renew_failed')
return { 'refused', reason, events }
`,
);

/**
 * release. ARGV[4] leaseId, ARGV[5] call id (the same for a call sent again).
 * Returns ["released", holdMs, event id, owner, task, token] — the released event is the
 * rest of what the caller sent, so only this goes back (owner/task/token nil if unknown) —
 * or ["refused", reason, events].
 */
const RELEASE = defineScript(
  "release",
  `
local c = resource_context()
local lease_id, call_id = ARGV[4], ARGV[5]

local holder_id = redis.call('GET', c.lock)
if holder_id == lease_id then
  local v = redis.call('HMGET', c.lease, 'owner', 'task', 'token', 'acquiredAt', 'ttlMs')
  local lease = { leaseId = lease_id, owner = v[1], task = v[2], token = v[3], ttlMs = v[5] }
  local hold = math.max(0, NOW_MS - (tonumber(v[4]) or NOW_MS))
  local ev = end_lease(c, lease, 'released', hold, true, nil, nil, call_id)
  return { 'released', tostring(hold), ev[1], v[1], v[2], v[3] }
end

local e = redis.call('HMGET', c.ended, 'leaseId', 'how', 'holdMs', 'eventId', 'owner', 'task', 'token', 'callId')
if e[1] == lease_id and e[2] == 'released' and e[8] == call_id then
  -- This very call released it already (sent again after its reply was lost): the same answer.
  -- false (not nil, which would end the reply array) becomes a nil reply.
  local function opt(v) if v == '' then return false end return v end
  return { 'released', e[3], e[4], opt(e[5]), opt(e[6]), opt(e[7]) }
end
if not holder_id then
  local lease = read_lease(c.lease)
  if lease and lease.leaseId == lease_id then
    -- Released too late: the TTL already ended it. Record that expiry (exactly once).
    return { 'refused', 'expired', { record_expiry(c, lease, 'release') } }
  end
  if e[1] == lease_id and e[2] == 'expired' then
    return { 'refused', 'expired', {} }
  end
end
return { 'refused', 'not_owner', {} }
`,
);

/**
 * forceRelease. ARGV[4] leaseId, ARGV[5] actor, ARGV[6] reason, ARGV[7] call id (the same for a call sent again).
 * Returns ["released", holdMs, lease fields, events] | ["lease_changed", current lease fields or [], events]
 * | ["not_found", events]. Lease fields are the hash as [field, value, …].
 */
const FORCE_RELEASE = defineScript(
  "forceRelease",
  `
local c = resource_context()
local lease_id, actor, reason, call_id = ARGV[4], ARGV[5], ARGV[6], ARGV[7]

local holder_id = redis.call('GET', c.lock)
if holder_id == lease_id then
  local lease, flat = read_lease(c.lease)
  if not lease then
    lease = { leaseId = lease_id, acquiredAt = NOW }
    flat = { 'leaseId', lease_id, 'acquiredAt', NOW }
  end
  local hold = math.max(0, NOW_MS - (tonumber(lease.acquiredAt) or NOW_MS))
  local ev = end_lease(c, lease, 'force_released', hold, true, actor, reason, call_id, flat)
  return { 'released', tostring(hold), flat, { ev } }
end
local e = redis.call('HMGET', c.ended, 'leaseId', 'how', 'holdMs', 'lease', 'event', 'callId')
if e[1] == lease_id and e[2] == 'force_released' and e[6] == call_id and e[4] and e[5] then
  -- This very call force-released it already (sent again after its reply was lost): the same answer.
  return { 'released', e[3], cjson.decode(e[4]), { cjson.decode(e[5]) } }
end
if holder_id then
  local _, flat = read_lease(c.lease)
  return { 'lease_changed', flat or {}, {} }
end
-- Nothing holds it. A lapsed, unswept lease is recorded as expired on the way.
local events = {}
local lapsed = read_lease(c.lease)
if lapsed then events[1] = record_expiry(c, lapsed, 'force_release') end
return { 'not_found', events }
`,
);

/**
 * reportFencingRejection. ARGV[4] stale token, ARGV[5] seen token, ARGV[6] by,
 * ARGV[7] owner, ARGV[8] task, ARGV[9] leaseId ("" when unknown).
 * Returns ["recorded", events].
 */
const FENCING_REJECTED = defineScript(
  "reportFencingRejection",
  `
local c = resource_context()
local function opt(v) if v == '' then return nil end return v end
local ev = { '', 'kind', 'fencing_rejected', 'resource', c.resource }
put(ev, 'leaseId', opt(ARGV[9]))
put(ev, 'owner', opt(ARGV[7]))
put(ev, 'task', opt(ARGV[8]))
put(ev, 'token', ARGV[4])
put(ev, 'detail', cjson.encode({ seenToken = ARGV[5], by = ARGV[6] }))
append_event(c, 'fencing_rejected', ev)
count(c, 'fencing_rejected')
return { 'recorded', { ev } }
`,
);

/**
 * reportLost. ARGV[4] leaseId, ARGV[5] owner, ARGV[6] task, ARGV[7] token, ARGV[8] reason.
 * Returns ["recorded", events].
 */
const LOST = defineScript(
  "reportLost",
  `
local c = resource_context()
local ev = {
  '', 'kind', 'lost', 'resource', c.resource, 'leaseId', ARGV[4], 'owner', ARGV[5], 'task', ARGV[6],
  'token', ARGV[7], 'reason', ARGV[8],
}
append_event(c, 'lost', ev)
count(c, 'lost')
return { 'recorded', { ev } }
`,
);

/**
 * sweep, one bucket. KEYS[1] bucket base. ARGV[1] events MAXLEN, ARGV[2] per-resource event id list length, ARGV[3] batch size.
 * Returns ["swept", expired, scanned, minutes folded] (integers).
 */
const SWEEP = defineScript(
  "sweep",
  `
local due = redis.call('ZRANGEBYSCORE', KEYS[1] .. 'idx', '-inf', NOW, 'LIMIT', 0, ARGV[3])
local expired = 0
for _, resource in ipairs(due) do
  local c = context(KEYS[1], resource, ARGV[1], ARGV[2])
  -- A lock key still present was renewed or expires within this millisecond: not ours to record.
  if redis.call('EXISTS', c.lock) == 0 then
    local lease = read_lease(c.lease)
    if lease then
      record_expiry(c, lease, 'sweep')
      expired = expired + 1
    else
      redis.call('ZREM', c.idx, resource)
      redis.call('ZREM', c.acq, resource)
      redis.call('ZREM', c.names, resource)
    end
  end
end
-- Buckets nobody writes to still get their closed minutes folded into hours.
local folded = fold_minutes(KEYS[1] .. 'stats:', tonumber(MINUTE) - 1, FOLD_PER_SWEEP)
return { 'swept', expired, #due, folded }
`,
);

const IDEMPOTENT_OPERATIONS: ReadonlySet<LeaseOperation> = new Set(["acquire", "release", "forceRelease", "sweep"]);

const BODIES: readonly ScriptBody[] = [ACQUIRE, RENEW, RELEASE, FORCE_RELEASE, FENCING_REJECTED, LOST, SWEEP];

export interface LeaseScript {
  operation: LeaseOperation;
  /**
   * Running the same call twice has the effect and answer of running it once, so a call whose
   * reply was lost to a dropped connection may be sent again: acquire (keyed by its new lease
   * id), release and forceRelease (keyed by a call id), sweep.
   */
  isIdempotent: boolean;
  /** The full Lua text (what EVAL takes). */
  lua: string;
  /** SHA-1 of `lua` (what EVALSHA takes). */
  sha: string;
}

function buildScript(b: ScriptBody): LeaseScript {
  // The top declares its own `local KEYS, ARGV`, so the script's globals are captured first.
  const lua = ["local SCRIPT_KEYS, SCRIPT_ARGV = KEYS, ARGV", LIBRARY_TOP, "start(SCRIPT_KEYS, SCRIPT_ARGV)", b.body].join("\n");
  return { operation: b.operation, isIdempotent: IDEMPOTENT_OPERATIONS.has(b.operation), lua, sha: createHash("sha1").update(lua).digest("hex") };
}

/** One script per operation. */
export const LEASE_SCRIPTS: Readonly<Record<LeaseOperation, LeaseScript>> = Object.fromEntries(
  BODIES.map((b) => [b.operation, buildScript(b)]),
) as Record<LeaseOperation, LeaseScript>;
