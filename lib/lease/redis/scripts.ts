import { createHash } from "node:crypto";
import { SLACK_BUCKET_COUNT, type LeaseEventKind } from "../types";
import { EVENT_FIELD_LETTERS } from "./codec";

/** Event kinds with a stream of their own per bucket (a read model, see projector.ts). */
export const INDEXED_EVENT_KINDS: readonly LeaseEventKind[] = ["expired", "force_released", "renew_failed", "lost", "fencing_rejected"];

/**
 * Key lifetimes in seconds: minute / hour / day stats hashes, fencing token, per-resource event
 * id list. Hours live 32 days so a 30-day chart can be summed from them until the closed days are
 * compacted into day hashes (stats.ts); days live 62, a 30-day window and the one before it.
 */
export const MINUTE_TTL_S = 172_800;
export const HOUR_TTL_S = 2_764_800;
export const DAY_TTL_S = 5_356_800;
export const FENCE_TTL_S = 31_536_000;
export const EVIDS_TTL_S = 1_296_000;
/** Renewal-slack hashes (one per bucket and hour) live 15 days. */
export const SLACK_TTL_S = 1_296_000;
/**
 * A bucket stream may grow to this many times eventsMaxLen while its events wait for the
 * projector (see append_event); past that its oldest events go, projected or not.
 */
export const EVENTS_BACKLOG_FACTOR = 10;
/** The record of a force-release (forceReleasedEvent) is kept a year: an audit entry left open is resolved from it. */
export const FORCE_RELEASED_TTL_S = 31_536_000;

/**
 * The Lua of the Redis store: one function per operation in one Redis Functions library
 * (Redis ≥ 7: `SET … NX GET`, `XADD <ms>-*`, FUNCTION/FCALL). The library is loaded once per
 * server (FUNCTION LOAD) and each call is one FCALL, so the shared helpers below are defined
 * once per server, not again on every call as a script run by EVALSHA would. A server that does
 * not have it (first use, a restart without persistence, FUNCTION FLUSH, a new cluster master)
 * answers "Function not found" *without running anything*; the library is then loaded (on every
 * master of a cluster) and the call sent again, see callScript in connection.ts. The library's
 * name and its function names carry a hash of its text, so processes running different versions
 * of this file against one server each call their own.
 *
 * The hot path (acquire, renew, release, forceRelease) writes, in one atomic step on the
 * store's clock (`TIME` inside the function — client clocks are never used), only what the
 * lease itself needs: the lock key, the lease hash, the fencing token, the bucket's expiry
 * index (sweep and `list` need it to find a lapsed lease, which is what makes the `expired`
 * event exactly-once), the durable lifetime counters conservation is checked against, a
 * short-lived note per lease id (how its acquire was answered and how it ended), and ONE event appended to the bucket's
 * stream. Listing indexes, per-minute / per-hour rollups, per-kind streams and per-resource
 * history are read models derived from that stream off the hot path (projector.ts). No
 * function does unbounded work: sweep records one resource per call.
 *
 * Every key a function touches is passed in KEYS (built in keys.ts, never in Lua) and carries
 * the bucket's hash tag, so a call lives in one Redis Cluster slot, is routed by KEYS, and is
 * refused (not half-run) by a node that no longer owns the slot during a reshard.
 *
 * Replies are flat arrays of strings, never JSON: `[status, …]` as documented on
 * each function. An event in a reply is `[id, field, value, field, value, …]` —
 * the stream entry it was written as, with its id in front.
 *
 * Resource functions share (buildResourceScriptKeys in keys.ts):
 *   KEYS[1] lock  KEYS[2] lease  KEYS[3] note  KEYS[4] fence  KEYS[5] idx  KEYS[6] events  KEYS[7] totals
 *   and, last of all (after any a script takes besides), KEYS[#KEYS] the bucket's projection cursor (proj)
 *   ARGV[1] resource  ARGV[2] eventsMaxLen  ARGV[3..] per script, documented on each.
 * KEYS[3] is the note of the lease id the call names (acquire, renew, release, forceRelease;
 * buildNoteKey): what lets a call sent again after its reply was lost answer as the first did.
 * renew takes two more: KEYS[8] the bucket's renewal-slack hash for the hour (buildSlackKey) and
 * KEYS[9] the bucket's lifetime per-group hash (`groups`).
 */

/**
 * Renewal slack (see lib/lease/slack.ts), counted inside renew before the lease hash is
 * updated: the share of the old TTL left on this clock, in SLACK_BUCKET_COUNT buckets
 * (slackBucketIndex), into field '<old ttl>|<bucket>|<group>' of KEYS[8] (hourly, for the TTL advice)
 * and 's|<bucket>|<group>' of KEYS[9] (lifetime, for /api/metrics; never expires). It stays on the
 * hot path because a renew appends no event, so the projector has nothing to derive it from; it
 * costs one HMGET and two HINCRBYs (plus the hourly key's EXPIRE on its first count).
 */
const RENEWAL_SLACK_LUA = `
  local slack_was = redis.call('HMGET', c.lease, 'expiresAt', 'ttlMs')
  local slack_ttl = tonumber(slack_was[2])
  if slack_ttl and slack_ttl > 0 and KEYS[8] then
    local slack_i = math.floor(((tonumber(slack_was[1]) or NOW_MS) - NOW_MS) * ${SLACK_BUCKET_COUNT} / slack_ttl)
    slack_i = math.max(0, math.min(${SLACK_BUCKET_COUNT - 1}, slack_i))
    if redis.call('HINCRBY', KEYS[8], slack_was[2] .. '|' .. slack_i .. '|' .. ARGV[5], '1') == 1 then
      redis.call('EXPIRE', KEYS[8], '${SLACK_TTL_S}')
    end
    if KEYS[9] then redis.call('HINCRBY', KEYS[9], 's|' .. slack_i .. '|' .. ARGV[5], '1') end
  end`;

/** One operation's body: it runs after start(), so KEYS, ARGV and NOW are set. */
interface ScriptBody {
  operation: LeaseOperation;
  body: string;
}

export type LeaseOperation = "acquire" | "renew" | "release" | "forceRelease" | "reportFencingRejection" | "reportLost" | "expire" | "project" | "indexLive" | "relist";

/** The letters of these event fields, in this order (EVENT_FIELD_LETTERS). */
function lettersOf(...fields: string[]): string {
  return fields.map((field) => EVENT_FIELD_LETTERS.find(([name]) => name === field)![1]).join("");
}

function defineScript(operation: LeaseOperation, body: string): ScriptBody {
  return { operation, body };
}

/** The fields of a lease id's note, in the order they are stored (see read_note in the library). */
const NOTE_FIELDS = ["leaseId", "how", "owner", "task", "token", "holdMs", "eventId", "callId", "lease", "event"] as const;

/**
 * The top of the library: constants and helpers, defined once when the library is loaded. The
 * per-call state lives in locals that start() sets from the call's KEYS and ARGV before the
 * operation's body runs (calls run one at a time).
 */
const LIBRARY_TOP = `
local KEYS, ARGV, TIME, NOW_US, NOW_MS, NOW, NOW_US_TEXT

local function start(keys, args)
  KEYS, ARGV = keys, args
  TIME = redis.call('TIME')
  NOW_US = tonumber(TIME[1]) * 1000000 + tonumber(TIME[2])
  NOW_MS = math.floor(NOW_US / 1000)
  -- Decimal strings, each made once. Millisecond values (< 1e14) print exactly with tostring
  -- ('%.14g'); the 16-digit microsecond clock would not, so it is spliced from TIME's own digits.
  NOW = tostring(NOW_MS)
  NOW_US_TEXT = TIME[1] .. string.sub('00000' .. TIME[2], -6)
end

local FENCE_TTL_S = '${FENCE_TTL_S}'
-- How long a lease id's note outlives the lease's TTL (after its grant, last renewal or end),
-- and how long a refused acquire's note lives: the window in which a repeat is answered as the first.
local NOTE_GRACE_MS = 60000
local EVENTS_BACKLOG_FACTOR = ${EVENTS_BACKLOG_FACTOR}

-- The keys and limits of one resource call (see the header of scripts.ts). \`note_lease\`: the
-- lease id KEYS[3] is the note of (false when the call names none). One table, filled again by
-- each call (calls run one at a time), where a new one each call cost the server more; every
-- field is always set, none ever nil, so filling it never reshapes it.
local CONTEXT = {
  lock = false, lease = false, note = false, note_lease = false, fence = false, idx = false, events = false, totals = false,
  proj = false, resource = false, events_max = false,
}
local function resource_context(note_lease)
  local c = CONTEXT
  c.lock, c.lease, c.note, c.note_lease, c.fence, c.idx, c.events, c.totals = KEYS[1], KEYS[2], KEYS[3] or false, note_lease or false, KEYS[4], KEYS[5], KEYS[6], KEYS[7]
  c.proj, c.resource, c.events_max = KEYS[#KEYS], ARGV[1], tonumber(ARGV[2])
  return c
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

-- Keeps the bucket stream at about events_max entries without dropping an event the projector
-- has not folded in yet: only entries before the projection cursor go (MINID), and no more than
-- the cap's excess (LIMIT; like MAXLEN ~ only whole stream nodes, so a little more may stay).
-- A backlog (nobody projecting) grows the stream up to EVENTS_BACKLOG_FACTOR × the cap; past that
-- the oldest go, projected or not, and 'gap' in the cursor hash has the projector rebuild the
-- listings from the lease hashes (projector.ts).
local function trim_events(c)
  local length = redis.call('XLEN', c.events)
  if length < c.events_max then return end
  local cursor = redis.call('HGET', c.proj, 'last')
  if cursor then
    length = length - redis.call('XTRIM', c.events, 'MINID', '~', cursor, 'LIMIT', length + 1 - c.events_max)
  end
  local ceiling = c.events_max * EVENTS_BACKLOG_FACTOR
  if length >= ceiling and redis.call('XTRIM', c.events, 'MAXLEN', '~', ceiling) > 0 then
    redis.call('HSET', c.proj, 'gap', '1')
  end
end

-- The stream entry of the event \`ev\` (a flat list { '', field, value, … }): one field-value pair,
-- the letters of its fields and their values each followed by byte 31 (EVENT_FIELD_LETTERS in codec.ts).
local EVENT_LETTERS = { ${EVENT_FIELD_LETTERS.map(([field, letter]) => `${field} = '${letter}'`).join(", ")} }
-- Two scratch lists, reused by every call (calls run one at a time): two new lists an event cost
-- the server more than packing saves it. The grant and the usual end pack in one concatenation.
local PACK_LETTERS, PACK_VALUES = {}, {}
local function pack_event(ev)
  local n = 0
  for i = 2, #ev, 2 do
    n = n + 1
    PACK_LETTERS[n] = EVENT_LETTERS[ev[i]]
    PACK_VALUES[n] = ev[i + 1]
  end
  PACK_VALUES[n + 1] = ''
  return table.concat(PACK_LETTERS, '', 1, n), table.concat(PACK_VALUES, '\\31', 1, n + 1)
end

-- Appends the event \`ev\` — a flat list { '', 'kind', kind, field, value, … } whose first slot is
-- kept for the id — to the bucket stream (capped, above), the one write every read model is derived from.
-- The id's ms part is the event time: we ask for <NOW>-*; if the stream's last id is already
-- ahead (the clock stepped back), Redis refuses it and we take the next id instead, so ids stay
-- ordered. pcall, because a refused command inside call() would abort the call half-written.
-- The cap is checked by the first event of each millisecond in the bucket (sequence 0), not by
-- every event: a busy bucket checks once a millisecond, a quiet one on every event, and the
-- stream passes the cap by at most the events of one millisecond (the cap is approximate anyway).
local function append_packed(c, letters, values)
  local id = redis.pcall('XADD', c.events, NOW .. '-*', letters, values)
  if type(id) ~= 'string' then
    id = redis.call('XADD', c.events, '*', letters, values)
  end
  if string.sub(id, -2) == '-0' then trim_events(c) end
  return id
end

local function append_event(c, ev)
  ev[1] = append_packed(c, pack_event(ev))
  return ev
end

-- A lease id's note is one string (a SET … PX, not a hash and an expiry): these fields, each
-- followed by the unit separator (byte 31), which printable owner, task, resource and JSON text
-- never contain. \`how\`: 'held' (written by the grant; a note still 'held' while the lease no longer
-- holds means it lapsed), 'released', 'expired', 'force_released', or 'contended' (a refused
-- acquire: \`lease\` is its reply, for a repeat of that call).
local NOTE_FIELDS = { ${NOTE_FIELDS.map((field) => `'${field}'`).join(", ")} }

-- What read_note answers when there is no note for the lease id (every field ''). Made once, and
-- callers only read it: the usual acquire names a new lease id, and answering it without a
-- pattern match and two new tables takes 1–3 µs off each acquire's Redis time (of ~20).
local NO_NOTE = { ${NOTE_FIELDS.map((field) => `${field} = ''`).join(", ")} }

-- The note of \`lease_id\` as a table; every field is '' when there is none. The lease id is
-- compared too: a key names its lease id and resource joined, which alone need not be unique.
local function read_note(c, lease_id)
  local raw = redis.call('GET', c.note)
  if not raw then return NO_NOTE end
  local e, i = {}, 1
  for value in string.gmatch(raw, '([^\\31]*)\\31') do
    e[NOTE_FIELDS[i]] = value
    i = i + 1
  end
  if e.leaseId ~= lease_id then return NO_NOTE end
  for _, field in ipairs(NOTE_FIELDS) do e[field] = e[field] or '' end
  return e
end

-- \`text\`: the note's fields, each followed by byte 31 (write_note builds it from a list).
local function write_note_text(c, text, ttl_ms)
  redis.call('SET', c.note, text, 'PX', tostring((tonumber(ttl_ms) or 0) + NOTE_GRACE_MS))
end

local function write_note(c, note, ttl_ms)
  write_note_text(c, table.concat(note, '\\31') .. '\\31', ttl_ms)
end

-- Ends the lease described by \`lease\`: drops its state and expiry index entry, records the
-- terminal event with holdMs, counts it in the durable totals, and, when the call names this
-- lease id (KEYS[3]), notes how it ended. That note lets a late renew/release by its holder get
-- "expired" rather than "not_owner" (and its renew_failed event still name the owner), a release
-- sent again answer "released" even after the resource changed hands, and the same force-release
-- call (same \`call_id\`: sent again because its reply was lost) answer what it did the first time.
-- An end the call does not name (sweep, an acquire taking a lapsed lease over) leaves the grant's
-- 'held' note, which says as much.
-- \`lease_flat\`: the lease hash as HGETALL gave it, kept for a repeated force-release's reply.
-- \`drop\`: which keys to delete — 'lock' (the lock key still holds this lease id: release,
-- force-release; deleted with the lease hash), 'lease' (the lock's TTL already removed it, so it
-- is left alone; no path deletes another's lock), 'none' (the caller deleted both already) or
-- 'takeover' (an acquire taking over a lapsed lease: the lock and the expiry index entry are the
-- new holder's already, only the old lease hash goes).
local function end_lease(c, lease, kind, hold_ms, drop, actor, reason, call_id, lease_flat, detail)
  if drop == 'lock' then redis.call('DEL', c.lock, c.lease) elseif drop == 'lease' or drop == 'takeover' then redis.call('DEL', c.lease) end
  if drop ~= 'takeover' then redis.call('ZREM', c.idx, c.resource) end
  local hold = tostring(hold_ms)
  local ev
  if lease.leaseId and lease.owner and lease.task and lease.token and not (actor or reason or detail) then
    -- The usual end (a release): packed in one step, as the acquire packs its grant, and the
    -- event built by one constructor.
    local id = append_packed(c, '${lettersOf("kind", "resource", "leaseId", "owner", "task", "token", "holdMs")}',
      kind .. '\\31' .. c.resource .. '\\31' .. lease.leaseId .. '\\31' .. lease.owner .. '\\31' .. lease.task .. '\\31' .. lease.token .. '\\31' .. hold .. '\\31')
    ev = { id, 'kind', kind, 'resource', c.resource, 'leaseId', lease.leaseId, 'owner', lease.owner, 'task', lease.task, 'token', lease.token, 'holdMs', hold }
  else
    ev = { '', 'kind', kind, 'resource', c.resource }
    put(ev, 'leaseId', lease.leaseId)
    put(ev, 'owner', lease.owner)
    put(ev, 'task', lease.task)
    put(ev, 'token', lease.token)
    put(ev, 'holdMs', hold)
    put(ev, 'actor', actor)
    put(ev, 'reason', reason)
    put(ev, 'detail', detail)
    append_event(c, ev)
  end
  redis.call('HINCRBY', c.totals, kind, '1')
  if lease.leaseId == c.note_lease then
    if lease_flat then
      write_note(c, { lease.leaseId, kind, lease.owner or '', lease.task or '', lease.token or '', hold, ev[1], call_id or '', cjson.encode(lease_flat), cjson.encode(ev) }, lease.ttlMs)
    else
      write_note_text(c, lease.leaseId .. '\\31' .. kind .. '\\31' .. (lease.owner or '') .. '\\31' .. (lease.task or '') .. '\\31' .. (lease.token or '') .. '\\31'
        .. hold .. '\\31' .. ev[1] .. '\\31' .. (call_id or '') .. '\\31', lease.ttlMs)
    end
  end
  return ev
end

-- A refused release counts itself in the totals (there is no event for it) and answers why.
local function refuse_release(c, reason, events)
  redis.call('HINCRBY', c.totals, 'release_refused:' .. reason, '1')
  return { 'refused', reason, events }
end

-- A lapsed lease held from acquiredAt to expiresAt (its TTL, on this clock, is the end).
-- \`by\` names the operation that recorded it; the detail is the one Postgres writes for an expiry.
local function record_expiry(c, lease, by, drop)
  local hold = math.max(0, (tonumber(lease.expiresAt) or NOW_MS) - (tonumber(lease.acquiredAt) or NOW_MS))
  local detail = cjson.encode({ renewals = tonumber(lease.renewals) or 0, expiredAt = lease.expiresAt, recordedBy = by })
  return end_lease(c, lease, 'expired', hold, drop or 'lease', nil, nil, nil, nil, detail)
end
`;

/**
 * acquire. ARGV[3] owner, ARGV[4] task, ARGV[5] ttlMs, ARGV[6] new leaseId, ARGV[7] call id (the
 * same for a call sent again; the lease id itself when the store chose it, a new one per call when
 * the caller did), ARGV[8] the store's bucket count. KEYS[3] is the new lease id's note, KEYS[8]
 * the bucket's recorded count (buildBucketCountKey).
 * Returns ["acquired", tookOverExpired "1"|"0", token, acquiredAt, expiresAt],
 * ["held", holder leaseId, owner, task, token, expiresAt], ["ended"] (this lease id was granted
 * before and no longer holds: a repeat, never granted twice) or ["buckets", recorded count or ""
 * when none is recorded].
 */
const ACQUIRE = defineScript(
  "acquire",
  `
local owner, task, ttl, lease_id, call_id = ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7]
local c = resource_context(lease_id)

-- A store with another bucket count would lock this resource under another key. Locks are
-- written only under the count this bucket records (set by the store's namespace check), so a
-- mismatch, or no record after the keys were lost, is refused before anything is read or written.
local bucket_count = redis.call('GET', KEYS[8])
if bucket_count ~= ARGV[8] then return { 'buckets', bucket_count or '' } end

-- A repeat: the same call sent again after its reply was lost, or a caller-chosen id sent again.
local note = read_note(c, lease_id)
if note.how == 'contended' then
  -- This very call was refused: the same answer, recorded once. Another call with this id is a new try.
  if note.callId == call_id then return cjson.decode(note.lease) end
elseif note.how ~= '' and redis.call('GET', c.lock) ~= lease_id then
  -- Granted before and no longer holding (released, force-released, expired, or lapsed and not
  -- yet recorded): granting it again would give one id two holds.
  local lapsed = read_lease(c.lease)
  if lapsed and lapsed.leaseId == lease_id and call_id == lease_id then
    -- The store's own resend, so its caller never saw this lease: it ends here as given back
    -- unused, not as an expiry (which reads as a holder that crashed).
    local hold = math.max(0, (tonumber(lapsed.expiresAt) or NOW_MS) - (tonumber(lapsed.acquiredAt) or NOW_MS))
    end_lease(c, lapsed, 'released', hold, 'lease', nil, 'acquire_reply_lost', call_id)
  end
  return { 'ended' }
end

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
  append_event(c, ev)
  local reply = { 'held', holder_id, h[1] or '', h[2] or '', h[3] or '0', expires }
  write_note(c, { lease_id, 'contended', '', '', '', '', ev[1], call_id, cjson.encode(reply) }, 0)
  return reply
end

-- The expiry index holds a resource exactly while a lease hash does (every function adds, removes
-- or drops both together), so ZADD's reply — 1: a new member — says there is no earlier lease to
-- look at, and the usual acquire reads nothing more. 0: the resource was indexed, so a lapsed lease
-- may still be unrecorded (or the entry was left behind, and the hash is gone).
local expires = tostring(NOW_MS + tonumber(ttl))
local old = nil
if redis.call('ZADD', c.idx, expires, c.resource) == 0 then
  old = read_lease(c.lease)
  if old then
    -- The lock's TTL ran out but nobody recorded it yet. Record the expiry here; its
    -- metadata is deleted in this same atomic step, so sweep cannot record it twice.
    record_expiry(c, old, 'acquire', 'takeover')
  end
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

-- renewedAt and renewals are first written by a renew: until then they read as acquiredAt and 0
-- (codec.ts toLease), and a shorter HSET is cheaper on every acquire.
redis.call('HSET', c.lease,
  'leaseId', lease_id, 'owner', owner, 'task', task, 'token', token, 'acquiredAt', NOW,
  'expiresAt', expires, 'ttlMs', ttl)

redis.call('HINCRBY', c.totals, 'acquired', '1')
-- Packed here rather than by append_event: one string built in one step, and no list to pack.
append_packed(c, '${lettersOf("kind", "resource", "leaseId", "owner", "task", "token")}',
  'acquired\\31' .. c.resource .. '\\31' .. lease_id .. '\\31' .. owner .. '\\31' .. task .. '\\31' .. token .. '\\31')
-- The grant's note: whatever ends this lease later, a repeat of this acquire finds it was granted.
write_note_text(c, lease_id .. '\\31held\\31' .. owner .. '\\31' .. task .. '\\31' .. token .. '\\31\\31\\31' .. call_id .. '\\31', ttl)
return { 'acquired', old and '1' or '0', token, NOW, expires }
`,
);

/**
 * renew. ARGV[3] leaseId, ARGV[4] ttlMs, ARGV[5] the resource's slack group (slackGroupOf);
 * KEYS[8] the bucket's renewal-slack hash for the hour.
 * Returns ["renewed", expiresAt, renewals] or ["refused", reason, events].
 */
const RENEW = defineScript(
  "renew",
  `
local lease_id, ttl = ARGV[3], ARGV[4]
local c = resource_context(lease_id)

local holder_id = redis.call('GET', c.lock)
if holder_id == lease_id then
${RENEWAL_SLACK_LUA}
  local expires = tostring(NOW_MS + tonumber(ttl))
  redis.call('PEXPIRE', c.lock, ttl)
  -- The grant's note lives as long as the lease (and a while after), however it ends.
  redis.call('PEXPIRE', c.note, tostring(tonumber(ttl) + NOTE_GRACE_MS))
  redis.call('HSET', c.lease, 'expiresAt', expires, 'ttlMs', ttl, 'renewedAt', NOW)
  local renewals = redis.call('HINCRBY', c.lease, 'renewals', '1')
  redis.call('ZADD', c.idx, expires, c.resource)
  -- Renewals are counted, not stored as events: a durable counter the projector turns into rollups.
  redis.call('HINCRBY', c.totals, 'renewed', '1')
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
  local e = read_note(c, lease_id)
  if e.how ~= '' and e.how ~= 'contended' then
    known = { owner = e.owner, task = e.task, token = e.token }
    -- "expired" (a note still 'held' means it lapsed) only while nobody else holds it; a new
    -- holder makes it "not_owner".
    if (e.how == 'expired' or e.how == 'held') and not holder_id then reason = 'expired' end
  end
end
known = known or {}
local ev = { '', 'kind', 'renew_failed', 'resource', c.resource, 'leaseId', lease_id }
put(ev, 'owner', known.owner ~= '' and known.owner)
put(ev, 'task', known.task ~= '' and known.task)
put(ev, 'token', known.token ~= '' and known.token)
put(ev, 'reason', reason)
events[#events + 1] = append_event(c, ev)
return { 'refused', reason, events }
`,
);

/**
 * release. ARGV[3] leaseId, ARGV[4] call id (the same for a call sent again), ARGV[5] "1" when
 * the holder lost the lease to its local deadline: the end is then recorded as 'expired'.
 * A release of a lease that a release already ended (this call sent again after its reply was
 * lost, or a new call for the same lease id) answers as that release did, from the lease id's note.
 * A refused release counts itself in the totals ('release_refused:<reason>'): there is no event
 * for it, and only this branch does the extra write.
 * Returns ["released", holdMs, event id, owner, task, token, kind, detail] — the event is the
 * rest of what the caller sent, so only this goes back (owner/task/token nil if unknown; kind
 * 'released', or 'expired' with its detail after a deadline loss) — or ["refused", reason, events].
 */
const RELEASE = defineScript(
  "release",
  `
local lease_id, call_id, after_loss = ARGV[3], ARGV[4], ARGV[5] == '1'
local c = resource_context(lease_id)

-- The lease hash, not the lock key, says whose lease it is: an acquire writes both in one step,
-- so while the hash names this lease the lock key holds this lease id or is gone (its TTL ran
-- out). One DEL of both then tells which, and deletes nobody else's lock.
local v = redis.call('HMGET', c.lease, 'leaseId', 'owner', 'task', 'token', 'acquiredAt', 'ttlMs', 'expiresAt', 'renewals')
if v[1] == lease_id then
  local lease = {
    leaseId = lease_id, owner = v[2] or nil, task = v[3] or nil, token = v[4] or nil, acquiredAt = v[5], ttlMs = v[6], expiresAt = v[7],
    renewals = v[8] or nil,
  }
  if redis.call('DEL', c.lock, c.lease) == 2 then
    local hold = math.max(0, NOW_MS - (tonumber(v[5]) or NOW_MS))
    if after_loss then
      local detail = cjson.encode({ renewals = tonumber(v[8]) or 0, recordedBy = 'release_after_deadline' })
      local ev = end_lease(c, lease, 'expired', hold, 'none', nil, nil, call_id, nil, detail)
      return { 'released', tostring(hold), ev[1], v[2], v[3], v[4], 'expired', detail }
    end
    local ev = end_lease(c, lease, 'released', hold, 'none', nil, nil, call_id)
    return { 'released', tostring(hold), ev[1], v[2], v[3], v[4] }
  end
  -- Released too late: the TTL already ended it. Record that expiry (exactly once).
  return refuse_release(c, 'expired', { record_expiry(c, lease, 'release', 'none') })
end

local e = read_note(c, lease_id)
if e.how == 'released' then
  -- A release ended it already (this call, sent again after its reply was lost, or an earlier
  -- one by the same holder): the same answer, even if the resource changed hands since.
  -- false (not nil, which would end the reply array) becomes a nil reply.
  local function opt(value) if value == '' then return false end return value end
  return { 'released', e.holdMs, e.eventId, opt(e.owner), opt(e.task), opt(e.token) }
end
if (e.how == 'expired' or e.how == 'held') and redis.call('EXISTS', c.lock) == 0 then
  return refuse_release(c, 'expired', {})
end
return refuse_release(c, 'not_owner', {})
`,
);

/**
 * forceRelease. ARGV[3] leaseId, ARGV[4] actor, ARGV[5] reason, ARGV[6] call id (the same for a call sent again);
 * KEYS[8] the lease's force-release record (buildForceReleasedKey), which keeps the event a year.
 * Returns ["released", holdMs, lease fields, events] | ["lease_changed", current lease fields or [], events]
 * | ["not_found", events]. Lease fields are the hash as [field, value, …].
 */
const FORCE_RELEASE = defineScript(
  "forceRelease",
  `
local lease_id, actor, reason, call_id = ARGV[3], ARGV[4], ARGV[5], ARGV[6]
local c = resource_context(lease_id)

local holder_id = redis.call('GET', c.lock)
if holder_id == lease_id then
  local lease, flat = read_lease(c.lease)
  if not lease then
    lease = { leaseId = lease_id, acquiredAt = NOW }
    flat = { 'leaseId', lease_id, 'acquiredAt', NOW }
  end
  local hold = math.max(0, NOW_MS - (tonumber(lease.acquiredAt) or NOW_MS))
  local ev = end_lease(c, lease, 'force_released', hold, 'lock', actor, reason, call_id, flat)
  redis.call('SET', KEYS[8], cjson.encode(ev), 'EX', '${FORCE_RELEASED_TTL_S}')
  return { 'released', tostring(hold), flat, { ev } }
end
local e = read_note(c, lease_id)
if e.how == 'force_released' and e.callId == call_id and e.lease ~= '' and e.event ~= '' then
  -- This very call force-released it already (sent again after its reply was lost): the same answer.
  return { 'released', e.holdMs, cjson.decode(e.lease), { cjson.decode(e.event) } }
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
 * reportFencingRejection. ARGV[3] stale token, ARGV[4] seen token, ARGV[5] by,
 * ARGV[6] owner, ARGV[7] task, ARGV[8] leaseId ("" when unknown).
 * Returns ["recorded", events].
 */
const FENCING_REJECTED = defineScript(
  "reportFencingRejection",
  `
local c = resource_context()
local function opt(v) if v == '' then return nil end return v end
local ev = { '', 'kind', 'fencing_rejected', 'resource', c.resource }
put(ev, 'leaseId', opt(ARGV[8]))
put(ev, 'owner', opt(ARGV[6]))
put(ev, 'task', opt(ARGV[7]))
put(ev, 'token', ARGV[3])
put(ev, 'detail', cjson.encode({ seenToken = ARGV[4], by = ARGV[5] }))
append_event(c, ev)
return { 'recorded', { ev } }
`,
);

/**
 * reportLost. ARGV[3] leaseId, ARGV[4] owner, ARGV[5] task, ARGV[6] token, ARGV[7] reason.
 * Returns ["recorded", events].
 */
const LOST = defineScript(
  "reportLost",
  `
local c = resource_context()
local ev = {
  '', 'kind', 'lost', 'resource', c.resource, 'leaseId', ARGV[3], 'owner', ARGV[4], 'task', ARGV[5],
  'token', ARGV[6], 'reason', ARGV[7],
}
append_event(c, ev)
return { 'recorded', { ev } }
`,
);

/**
 * expire: records the expiry of one lapsed lease (sweep calls it for each resource its bucket's
 * expiry index says is due). Resource KEYS and ARGV[1..2] only.
 * Returns ["expired", events] — empty when there was nothing to record.
 */
const EXPIRE = defineScript(
  "expire",
  `
local c = resource_context()
-- A lock key still present was renewed or expires within this millisecond: not ours to record.
if redis.call('EXISTS', c.lock) == 1 then return { 'expired', {} } end
local lease = read_lease(c.lease)
if not lease then
  -- Ended since the index was read (its end removed the entry) or left behind: drop the entry.
  redis.call('ZREM', c.idx, c.resource)
  return { 'expired', {} }
end
return { 'expired', { record_expiry(c, lease, 'sweep') } }
`,
);

/**
 * project: applies one batch of read-model writes for one bucket, once (projector.ts builds it).
 * KEYS[1] the bucket's projection cursor (hash: last = last applied stream id, renewed = the
 * renewal count already in the rollups), KEYS[2] the bucket's totals, KEYS[3] and KEYS[4] the
 * minute and hour stats hashes that take the renewals counted since, KEYS[5..] what the writes touch.
 * ARGV[1] the cursor the batch was read after ("" for none, "*" for a batch that leaves it alone),
 * ARGV[2] the batch's last stream id ("" moves nothing), ARGV[3] / ARGV[4] the same for the
 * owner / task id-stream cursor (`ids`: "*" / "" when the batch does not index them), ARGV[5..]
 * the writes, each `argc, command, key index, arg, …` (argc counts what follows the index); command
 * `IDS` is an event's two id-stream entries: `4, IDS, owner stream index, task stream index (0: none), cap, id, kind`.
 * The cursor checks make it idempotent: a batch read after a cursor that moved on (another
 * projector applied it first, or this is a replay) changes nothing. Bounded by the batch size.
 * Returns ["applied", renewals added] or ["stale", current cursor].
 */
const PROJECT = defineScript(
  "project",
  `
local cursor = redis.call('HMGET', KEYS[1], 'last', 'renewed', 'ids')
if ARGV[1] ~= '*' and (cursor[1] or '') ~= ARGV[1] then return { 'stale', cursor[1] or '' } end
if ARGV[3] ~= '*' and (cursor[3] or '') ~= ARGV[3] then return { 'stale', cursor[1] or '' } end
local WRITES = { ZADD = true, ZREM = true, HINCRBY = true, HSET = true, HDEL = true, SADD = true, LPUSH = true, LTRIM = true, EXPIRE = true, XADD = true, IDS = true }
local i = 5
while i <= #ARGV do
  local argc = tonumber(ARGV[i])
  local command, key = ARGV[i + 1], KEYS[tonumber(ARGV[i + 2])]
  if not WRITES[command] or not key then return redis.error_reply('project: bad write at ' .. i) end
  if command == 'IDS' then
    -- An event's entries in its owner's and its task's id streams (KEYS[idx], KEYS[other idx] —
    -- 0 for none): under the event's own id, holding its kind; each capped ('~') at its cap, or
    -- not when that is '' (the batch capped it at an earlier entry). pcall as for a per-kind copy below.
    local other, cap, other_cap, id, kind = KEYS[tonumber(ARGV[i + 3])], ARGV[i + 4], ARGV[i + 5], ARGV[i + 6], ARGV[i + 7]
    if cap == '' then redis.pcall('XADD', key, id, 'k', kind) else redis.pcall('XADD', key, 'MAXLEN', '~', cap, id, 'k', kind) end
    if other then
      if other_cap == '' then redis.pcall('XADD', other, id, 'k', kind) else redis.pcall('XADD', other, 'MAXLEN', '~', other_cap, id, 'k', kind) end
    end
  else
    local args = {}
    for j = 1, argc do args[j] = ARGV[i + 2 + j] end
    if command == 'XADD' then
      -- A per-kind copy under the event's own id: an id already there (such a stream is never
      -- ahead of its bucket stream otherwise) means it was written before, so pcall and move on.
      redis.pcall('XADD', key, unpack(args))
    else
      redis.call(command, key, unpack(args))
    end
  end
  i = i + 3 + argc
end
local renewed = tonumber(redis.call('HGET', KEYS[2], 'renewed') or '0')
local added = renewed - tonumber(cursor[2] or '0')
if added > 0 then
  redis.call('HINCRBY', KEYS[3], 'renewed', tostring(added))
  redis.call('EXPIRE', KEYS[3], '${MINUTE_TTL_S}')
  redis.call('HINCRBY', KEYS[4], 'renewed', tostring(added))
  redis.call('EXPIRE', KEYS[4], '${HOUR_TTL_S}')
end
if ARGV[2] ~= '' then redis.call('HSET', KEYS[1], 'last', ARGV[2]) end
if ARGV[4] ~= '' then redis.call('HSET', KEYS[1], 'ids', ARGV[4]) end
redis.call('HSET', KEYS[1], 'renewed', tostring(renewed), 'at', NOW)
return { 'applied', tostring(math.max(added, 0)) }
`,
);

/**
 * indexLive: one batch of the backfill of a bucket's live-lease owner / task zsets (projector.ts).
 * KEYS[1] the bucket's projection cursor hash, then per lease: KEYS[3i-1] its lease hash,
 * KEYS[3i] its owner zset, KEYS[3i+1] its task zset. ARGV[1] the backfill cursor the batch was
 * read after ('live' field, "" for none), ARGV[2] the cursor after it, then per lease: resource,
 * lease id, score. A lease is added only if its hash still holds that lease id: checked here,
 * atomically with the projector's own ZREMs, so a lease that ended since it was read is not
 * added back. A stale cursor (another projector did this batch) changes nothing.
 * Returns ["applied"] or ["stale"].
 */
const INDEX_LIVE = defineScript(
  "indexLive",
  `
if (redis.call('HGET', KEYS[1], 'live') or '') ~= ARGV[1] then return { 'stale' } end
local n = (#KEYS - 1) / 3
for i = 1, n do
  local resource, lease_id, score = ARGV[3 * i], ARGV[3 * i + 1], ARGV[3 * i + 2]
  if redis.call('HGET', KEYS[3 * i - 1], 'leaseId') == lease_id then
    redis.call('ZADD', KEYS[3 * i], score, resource)
    redis.call('ZADD', KEYS[3 * i + 1], score, resource)
  end
end
redis.call('HSET', KEYS[1], 'live', ARGV[2])
return { 'applied' }
`,
);

/**
 * relist: one batch of the rebuild of a bucket's listings from its lease hashes, after events the
 * projector never saw were trimmed (projector.ts). KEYS[1] the bucket's projection cursor hash,
 * KEYS[2] acq, KEYS[3] names, then per lease: KEYS[3i+1] its lease hash, KEYS[3i+2] its owner
 * zset, KEYS[3i+3] its task zset. ARGV[1] the walk's position the batch was read at ('relist'
 * field), ARGV[2] the position after it ("" when the walk is done), then per lease: resource,
 * lease id, acquiredAt. As in indexLive, a lease is listed only if its hash still holds that
 * lease id, so one that ended since it was read is not listed again. Returns ["applied"] or ["stale"].
 */
const RELIST = defineScript(
  "relist",
  `
if (redis.call('HGET', KEYS[1], 'relist') or '') ~= ARGV[1] then return { 'stale' } end
local n = (#KEYS - 3) / 3
for i = 1, n do
  local resource, lease_id, acquired_at = ARGV[3 * i], ARGV[3 * i + 1], ARGV[3 * i + 2]
  if redis.call('HGET', KEYS[3 * i + 1], 'leaseId') == lease_id then
    redis.call('ZADD', KEYS[2], acquired_at, resource)
    redis.call('ZADD', KEYS[3], 0, resource)
    redis.call('ZADD', KEYS[3 * i + 2], acquired_at, resource)
    redis.call('ZADD', KEYS[3 * i + 3], acquired_at, resource)
  end
end
if ARGV[2] == '' then redis.call('HDEL', KEYS[1], 'relist') else redis.call('HSET', KEYS[1], 'relist', ARGV[2]) end
return { 'applied' }
`,
);

const IDEMPOTENT_OPERATIONS: ReadonlySet<LeaseOperation> = new Set(["acquire", "release", "forceRelease", "expire", "project", "indexLive", "relist"]);

const BODIES: readonly ScriptBody[] = [ACQUIRE, RENEW, RELEASE, FORCE_RELEASE, FENCING_REJECTED, LOST, EXPIRE, PROJECT, INDEX_LIVE, RELIST];

export interface LeaseScript {
  operation: LeaseOperation;
  /**
   * Running the same call twice has the effect and answer of running it once, so a call whose
   * reply was lost to a dropped connection may be sent again: acquire (keyed by its new lease
   * id), release and forceRelease (keyed by a call id), expire, project (keyed by its cursor).
   */
  isIdempotent: boolean;
  /** The library function to FCALL (`lw_<version>_<operation>`). */
  functionName: string;
}

/** The Redis Functions library every operation lives in: what FUNCTION LOAD takes. */
export interface LeaseLibrary {
  /** `leasewatch_<version>`. */
  name: string;
  /** The library's text, starting with its `#!lua name=` line. */
  code: string;
}

/** The version in the library's and functions' names: a hash of the library's text without them. */
const LIBRARY_VERSION = createHash("sha1")
  .update([LIBRARY_TOP, ...BODIES.map((b) => `${b.operation}\n${b.body}`)].join("\n"))
  .digest("hex")
  .slice(0, 12);

function functionNameOf(operation: LeaseOperation): string {
  return `lw_${LIBRARY_VERSION}_${operation}`;
}

function buildLibrary(): LeaseLibrary {
  const name = `leasewatch_${LIBRARY_VERSION}`;
  const functions = BODIES.map(
    (b) => `redis.register_function('${functionNameOf(b.operation)}', function(keys, args)\nstart(keys, args)\n${b.body}\nend)`,
  );
  return { name, code: [`#!lua name=${name}`, LIBRARY_TOP, ...functions].join("\n") };
}

export const LEASE_LIBRARY: LeaseLibrary = buildLibrary();

/** One function per operation. */
export const LEASE_SCRIPTS: Readonly<Record<LeaseOperation, LeaseScript>> = Object.fromEntries(
  BODIES.map((b) => [b.operation, { operation: b.operation, isIdempotent: IDEMPOTENT_OPERATIONS.has(b.operation), functionName: functionNameOf(b.operation) }]),
) as Record<LeaseOperation, LeaseScript>;
