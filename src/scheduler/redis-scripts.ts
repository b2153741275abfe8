/**
 * The Lua scripts that read and change one key's shared budget atomically. KEYS: 1 the state hash
 * (limit, remaining, resetAt, pausedUntil), 2 the leases of unanswered requests (grant id → expiry),
 * 3 the send times under a per-minute cap, 4 the processes on the key (process id → expiry).
 * Times are the callers' clocks in Unix milliseconds; -1 stands for "none".
 */

/**
 * ARGV: now, wanted, leaseMs, resetMarginMs, maxPerMinute (0: none), process id, first grant
 * number, keepMs, windowMs (the window's length as the process learned it; 0: not known), reads
 * (how many of the `wanted` are reads of tasks in flight, which come first), endHint (when the
 * window ends by the steps the process learned, for after a rollover; -1: none). Grants up to
 * `wanted` requests, each under a lease `process:number`: the reads first, at the pace of
 * read-pace.ts (the same rule, on the shared window), and while the pace holds them, the others.
 * Answers {granted, next (when to ask again), limit, remaining, resetAt, pausedUntil, unanswered,
 * processes, sent (the sends of every process in the last minute, under a cap; else 0), reads
 * granted (the first of the grants)}.
 */
export const ACQUIRE = `
local now, wanted, leaseMs = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local margin, cap, member = tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6]
local first, keepMs = tonumber(ARGV[7]), tonumber(ARGV[8])
local windowMs, reads, endHint = tonumber(ARGV[9]), tonumber(ARGV[10]), tonumber(ARGV[11])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now)
redis.call('ZADD', KEYS[4], now + leaseMs, member)
local s = redis.call('HMGET', KEYS[1], 'limit', 'remaining', 'resetAt', 'pausedUntil')
local limit, remaining, resetAt = tonumber(s[1]), tonumber(s[2]), tonumber(s[3])
local paused = tonumber(s[4]) or 0
if resetAt and now >= resetAt + margin then
  -- The window rolled over: the full limit until an answer says otherwise.
  resetAt = nil
  remaining = limit
  redis.call('HDEL', KEYS[1], 'resetAt')
  if limit then redis.call('HSET', KEYS[1], 'remaining', limit) else redis.call('HDEL', KEYS[1], 'remaining') end
end
local unanswered = redis.call('ZCARD', KEYS[2])
local function nextSend()
  if now < paused then return paused end
  if remaining == nil then
    if unanswered > 0 then return -1 end
  elseif remaining - unanswered <= 0 then
    if resetAt then return resetAt + margin end
    if unanswered > 0 then return -1 end
  end
  if cap > 0 then
    redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now - 60000)
    if redis.call('ZCARD', KEYS[3]) >= cap then
      return tonumber(redis.call('ZRANGE', KEYS[3], 0, 0, 'WITHSCORES')[2]) + 60000
    end
  end
  return now
end
-- readPaceTime of read-pace.ts, on the shared window.
local function readPaceTime()
  if windowMs <= 0 or limit == nil or remaining == nil then return now end
  local endsAt = resetAt
  if endsAt == nil and endHint > 0 then endsAt = endHint end
  if endsAt == nil or endsAt <= now then return now end
  if endsAt - now > windowMs then endsAt = now + windowMs end
  local burst = math.max(1, math.floor(limit / 10))
  local room = remaining - unanswered
  if room - 1 >= math.ceil(limit * (endsAt - now) / windowMs) - burst then return now end
  return math.ceil(endsAt - (room - 1 + burst) * windowMs / limit)
end
local function grantOne(number)
  local id = member .. ':' .. number
  redis.call('ZADD', KEYS[2], now + leaseMs, id)
  if cap > 0 then redis.call('ZADD', KEYS[3], now, id) end
  unanswered = unanswered + 1
end
local granted, readsGranted, nextAt, readsAt = 0, 0, now, now
-- The reads first, while the window has room and their pace lets them go.
while readsGranted < reads do
  nextAt = nextSend()
  if nextAt ~= now then break end
  readsAt = readPaceTime()
  if readsAt > now then break end
  grantOne(first + granted)
  granted = granted + 1
  readsGranted = readsGranted + 1
end
-- Then the others: behind reads the pace holds, they go.
if nextAt == now then
  while granted - readsGranted < wanted - reads do
    nextAt = nextSend()
    if nextAt ~= now then break end
    grantOne(first + granted)
    granted = granted + 1
  end
end
if nextAt == -1 then
  -- Waiting for an answer: at the latest, the first lease that could expire frees a place.
  nextAt = tonumber(redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')[2]) or now
end
-- Reads held by their pace, and nothing else holding them: ask again at the pace's time.
if readsGranted < reads and readsAt > now and nextAt == now then nextAt = readsAt end
local sent = 0
if cap > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now - 60000)
  sent = redis.call('ZCARD', KEYS[3])
end
for i = 1, 4 do redis.call('PEXPIRE', KEYS[i], keepMs) end
local processes = redis.call('ZCARD', KEYS[4])
return {granted, nextAt, limit or -1, remaining or -1, resetAt or -1, paused, unanswered, processes, sent, readsGranted}
`;

/**
 * Folds what one process learned of the window into the shared state, as RateBudget.observe does.
 * Expects locals now, limit, remaining, resetAt (-1: none) and pauseUntil (0 or less: none).
 */
const FOLD_WINDOW = `
local s = redis.call('HMGET', KEYS[1], 'remaining', 'resetAt', 'pausedUntil')
local known, knownReset = tonumber(s[1]), tonumber(s[2])
if limit >= 0 then redis.call('HSET', KEYS[1], 'limit', limit) end
if resetAt > now and remaining >= 0 then
  if knownReset == nil or resetAt > knownReset then
    redis.call('HSET', KEYS[1], 'resetAt', resetAt, 'remaining', remaining)
  elseif resetAt == knownReset then
    -- Answers arrive out of order; within one window the smallest count is the latest.
    redis.call('HSET', KEYS[1], 'remaining', math.min(known or remaining, remaining))
  end
end
if pauseUntil > now then
  redis.call('HSET', KEYS[1], 'pausedUntil', math.max(tonumber(s[3]) or 0, pauseUntil))
end
`;

/**
 * ARGV: now, status, limit, remaining, resetAt, pauseUntil (on a 429), channel. Folds one answer's
 * headers into the shared state as RateBudget.observe does, and tells the other processes.
 */
export const OBSERVE = `
local now, status = tonumber(ARGV[1]), tonumber(ARGV[2])
local limit, remaining, resetAt = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local pauseUntil = tonumber(ARGV[6])
${FOLD_WINDOW}
if status == 429 then
  redis.call('HSET', KEYS[1], 'remaining', 0)
  redis.call('HINCRBY', KEYS[1], 'rateLimited', 1)
end
redis.call('PUBLISH', ARGV[7], 'observed')
return 1
`;

/** ARGV: grant id, channel. The request's answer is in: its lease ends. */
export const RELEASE = `
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('PUBLISH', ARGV[2], 'released')
return 1
`;

/** ARGV: expiry, process id, grant ids… Extends (or, after Redis lost them, restores) this process's leases; answers the count of processes on the key. */
export const RENEW = `
local expiry = tonumber(ARGV[1])
redis.call('ZADD', KEYS[4], expiry, ARGV[2])
for i = 3, #ARGV do redis.call('ZADD', KEYS[2], expiry, ARGV[i]) end
return redis.call('ZCARD', KEYS[4])
`;

/**
 * ARGV: now, expiry, process id, limit, remaining, resetAt, pausedUntil, keepMs, channel, lease
 * count N, N grant ids, then pairs (send time, grant id). A process that went on alone while Redis
 * was away joins again: its unanswered requests hold leases once more (and the leases of requests
 * answered meanwhile go), its sends of the last minute count against the cap again, and what it
 * learned of the window is folded in. A Redis that restarted empty thus starts from what the
 * process knows instead of nothing, and one that kept its state loses nothing newer.
 */
export const RESTORE = `
local now, expiry, member = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3]
local limit, remaining, resetAt = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local pauseUntil, keepMs, channel = tonumber(ARGV[7]), tonumber(ARGV[8]), ARGV[9]
local leaseCount = tonumber(ARGV[10])
local live = {}
for i = 11, 10 + leaseCount do live[ARGV[i]] = true end
local prefix = member .. ':'
for _, id in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
  if string.sub(id, 1, #prefix) == prefix and not live[id] then redis.call('ZREM', KEYS[2], id) end
end
for i = 11, 10 + leaseCount do redis.call('ZADD', KEYS[2], expiry, ARGV[i]) end
for i = 11 + leaseCount, #ARGV - 1, 2 do redis.call('ZADD', KEYS[3], tonumber(ARGV[i]), ARGV[i + 1]) end
redis.call('ZADD', KEYS[4], expiry, member)
${FOLD_WINDOW}
for i = 1, 4 do redis.call('PEXPIRE', KEYS[i], keepMs) end
redis.call('PUBLISH', channel, 'rejoined')
return 1
`;
