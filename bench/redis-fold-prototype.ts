/**
 * A prototype of folding a bucket's event stream inside Redis, for one question only: what
 * would such a fold cost Redis per event, against the projector's 7–8 µs (client 17)? It is
 * measured by redis-projector-profile.ts (LW_PROFILE_FOLD=1) on the same backlog, after the
 * projector, and is not a projector: it writes the projector's kinds of keys under
 * `<bucket>fold:`, which nothing reads, and leaves out what costs little per event (the
 * renewals, the cursor checks, the rare kinds' streams, gap handling, the hold classes: one
 * zset instead of one per duration class). Per event it does the projector's work: parse the
 * entry, count it in the minute and hour stats and the prefix groups, the lifetime hold
 * histogram, the listings, the live owner / task zsets, the history list, the owner and task id
 * streams, the grants, the open holds and the hold index (a JSON member per ended hold).
 */
import type { Redis } from "ioredis";
import { HOLD_HISTOGRAM_BOUNDS_MS } from "@leasewatch/lease";
import { EVENT_FIELD_LETTERS } from "@leasewatch/lease/internal";

const FOLD_LUA = `
local base, cap = ARGV[1], ARGV[3]
local bounds = {}
for i = 4, #ARGV do bounds[#bounds + 1] = tonumber(ARGV[i]) end
local last = redis.call('HGET', KEYS[2], 'last')
local entries = redis.call('XRANGE', KEYS[1], last and ('(' .. last) or '-', '+', 'COUNT', ARGV[2])
if #entries == 0 then return 0 end
local TERMINAL = { released = true, expired = true, force_released = true }
local FIELDS = { ${EVENT_FIELD_LETTERS.map(([field, letter]) => `${letter} = '${field}'`).join(", ")} }
local counters = {}
local function count(key, field, n)
  local t = counters[key]
  if not t then t = {}; counters[key] = t end
  t[field] = (t[field] or 0) + n
end
local function hold_bucket(ms)
  for i, b in ipairs(bounds) do if ms <= b then return i - 1 end end
  return #bounds
end
local function prefix(resource, depth)
  local pos = 0
  for _ = 1, depth do
    local s = string.find(resource, ':', pos + 1, true)
    if not s then return resource end
    pos = s
  end
  return string.sub(resource, 1, pos)
end
local totals, groups = base .. 'totals', base .. 'groups'
local listed, live, history, grants, id_streams = {}, {}, {}, {}, {}
local open_add, open_del, holds, opens = {}, {}, {}, {}
local minute_now, mkey, hkey
for _, e in ipairs(entries) do
  local id, f = e[1], e[2]
  local ev = {}
  if #f == 2 then
    -- A packed entry (EVENT_FIELD_LETTERS in lib/lease/redis/codec.ts): letters, then values.
    local at = 1
    for i = 1, #f[1] do
      local stop = string.find(f[2], '\\31', at, true)
      ev[FIELDS[string.sub(f[1], i, i)]] = string.sub(f[2], at, stop - 1)
      at = stop + 1
    end
  else
    for i = 1, #f, 2 do ev[f[i]] = f[i + 1] end
  end
  local kind, resource = ev.kind, ev.resource
  local ms = tonumber(string.sub(id, 1, string.find(id, '-', 1, true) - 1))
  local minute = math.floor(ms / 60000)
  if minute ~= minute_now then
    minute_now = minute
    mkey = base .. 'stats:m:' .. minute
    hkey = base .. 'stats:h:' .. math.floor(minute / 60)
  end
  local group = prefix(resource, 2)
  if TERMINAL[kind] then
    local hold = tonumber(ev.holdMs or '0')
    local hb = hold_bucket(hold)
    count(totals, 'hold:h' .. hb, 1)
    count(totals, 'holdSum', hold)
    local total_group = prefix(resource, 3)
    count(groups, 'h|' .. hb .. '|' .. total_group, 1)
    count(groups, 'hs|' .. total_group, hold)
    count(mkey, kind .. ':h' .. hb, 1)
    count(mkey, 'holdSum', hold)
    count(hkey, kind .. ':h' .. hb, 1)
    count(hkey, 'holdSum', hold)
    count(hkey, 'gh|' .. hb .. '|' .. group, 1)
    listed[resource] = false
    local start = opens[ev.leaseId] or (ms - hold)
    holds[#holds + 1] = ms
    holds[#holds + 1] = cjson.encode({ s = start, e = ms, r = resource, l = ev.leaseId, o = ev.owner, t = ev.task, f = ev.token, k = kind })
    open_del[#open_del + 1] = ev.leaseId
  else
    count(mkey, kind, 1)
    count(hkey, kind, 1)
    if kind == 'acquired' then
      listed[resource] = ms
      opens[ev.leaseId] = ms
      open_add[#open_add + 1] = ev.leaseId
      open_add[#open_add + 1] = ms
    end
  end
  count(hkey, 'g|' .. kind .. '|' .. group, 1)
  if kind == 'acquired' or TERMINAL[kind] then
    local score = kind == 'acquired' and ms or false
    for _, k in ipairs({ ev.owner and (base .. 'lo:' .. ev.owner), ev.task and (base .. 'lt:' .. ev.task) }) do
      live[k] = live[k] or {}
      live[k][resource] = score
    end
  end
  local h = history[resource]
  if not h then h = {}; history[resource] = h end
  h[#h + 1] = id
  for _, k in ipairs({ ev.owner and (base .. 'ido:' .. ev.owner), ev.task and (base .. 'idt:' .. ev.task) }) do
    redis.call('XADD', k, 'MAXLEN', '~', cap, id, 'k', kind)
    id_streams[k] = true
  end
  local gk = base .. 'grants:' .. math.floor(ms / 86400000)
  local g = grants[gk]
  if not g then g = {}; grants[gk] = g end
  if ev.leaseId then g['l:' .. ev.leaseId] = resource end
  if ev.token then g['t:' .. ev.token] = resource end
end
for key, fields in pairs(counters) do
  for field, n in pairs(fields) do redis.call('HINCRBY', key, field, n) end
  if key ~= totals and key ~= groups then redis.call('EXPIRE', key, 2764800) end
end
for resource, score in pairs(listed) do
  if score then
    redis.call('ZADD', base .. 'acq', score, resource)
    redis.call('ZADD', base .. 'names', 0, resource)
  else
    redis.call('ZREM', base .. 'acq', resource)
    redis.call('ZREM', base .. 'names', resource)
  end
end
for key, members in pairs(live) do
  local add, rem = {}, {}
  for r, s in pairs(members) do
    if s then add[#add + 1] = s; add[#add + 1] = r else rem[#rem + 1] = r end
  end
  if #rem > 0 then redis.call('ZREM', key, unpack(rem)) end
  if #add > 0 then redis.call('ZADD', key, unpack(add)) end
end
for resource, ids in pairs(history) do
  local k = base .. 'evids:' .. resource
  redis.call('LPUSH', k, unpack(ids))
  redis.call('LTRIM', k, 0, 999)
  redis.call('EXPIRE', k, 1296000)
end
for k in pairs(id_streams) do redis.call('EXPIRE', k, 1296000) end
for key, fields in pairs(grants) do
  local flat = {}
  for field, value in pairs(fields) do flat[#flat + 1] = field; flat[#flat + 1] = value end
  redis.call('HSET', key, unpack(flat))
  redis.call('EXPIRE', key, 1296000)
end
if #open_add > 0 then redis.call('HSET', base .. 'holds:open', unpack(open_add)) end
if #open_del > 0 then redis.call('HDEL', base .. 'holds:open', unpack(open_del)) end
if #holds > 0 then redis.call('ZADD', base .. 'holds:c0', unpack(holds)) end
redis.call('HSET', KEYS[2], 'last', entries[#entries][1])
return #entries
`;

/** Folds every bucket stream of `namespace` with the prototype, `batch` entries a call; returns the events folded. */
export async function foldNamespace(admin: Redis, namespace: string, batch: number, cap: number): Promise<number> {
  const streams: string[] = [];
  let cursor = "0";
  do {
    const [next, keys] = await admin.scan(cursor, "MATCH", `${namespace}:{b*}:events`, "COUNT", 1000);
    cursor = next;
    streams.push(...keys);
  } while (cursor !== "0");
  const sha = (await admin.script("LOAD", FOLD_LUA)) as string;
  let folded = 0;
  for (;;) {
    const counts = await Promise.all(
      streams.map((stream) => {
        const base = `${stream.slice(0, -"events".length)}fold:`;
        return admin.evalsha(sha, 2, stream, `${base}cursor`, base, batch, cap, ...HOLD_HISTOGRAM_BOUNDS_MS) as Promise<number>;
      }),
    );
    const round = counts.reduce((a, b) => a + b, 0);
    if (round === 0) return folded;
    folded += round;
  }
}
