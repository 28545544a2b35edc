-- The GCRA of package towerredis: a token bucket whose whole state is one
-- key holding its theoretical arrival time (tat), in microseconds of
-- Redis's own clock: the instant at which the bucket is full again. The
-- arithmetic is that of package limit's gcra, on microseconds.
--
-- KEYS[1] the bucket's key.
-- ARGV[1] interval: one token's time, in microseconds (at least 1).
-- ARGV[2] burst: the bucket's size, in tokens (at least 1).
-- ARGV[3] n: take up to n tokens (n >= 1); or give back -n tokens (n < 0).
-- ARGV[4] taking: the max wait, in microseconds: tokens due within it are
--         reserved. Giving back: the tat that the take of those tokens
--         answered (their mark).
--
-- Taking: token k (k = 1, 2, ...) is due at base + k*interval - span,
-- where base = max(tat, now) and span = burst*interval. The script grants
-- the g = min(n, count of tokens due by now + max wait) first tokens, and
-- moves tat to base + g*interval. It answers {g, due1 - now, tat}: with
-- g = 0 (nothing granted, tat unchanged), due1 - now is how long until the
-- next token, more than the max wait; with g >= 1, token k is due at
-- max(now, due1 + (k-1)*interval), and due1 - now may be negative (tokens
-- that were there already).
--
-- Giving back: if the key still holds the tokens' mark, no token was
-- taken after them, and tat moves back by -n intervals, never before now.
-- Otherwise nothing changes, and the tokens are lost: a token taken after
-- them holds the instant after theirs, and moving tat back would hand
-- that instant to a second caller, two requests where the bucket allows
-- one (package limit's gcra.giveBack, the same rule). The answer is
-- {0, 0, tat}, tat after the call.
--
-- The key expires when the bucket is full again: a full bucket is the
-- same as one never used, so a limit's memory in Redis lasts at most the
-- bucket's span after its last use. Every number stays an integer below
-- 2^53, so Lua's doubles are exact.
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local n = tonumber(ARGV[3])
local arg4 = tonumber(ARGV[4])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])

-- A key of another type, or not holding a number, is answered with a
-- string: the caller takes any reply but three integers as a bad reply,
-- which never grants. (An error reply would read as Redis being down.)
local got = redis.pcall('GET', KEYS[1])
if type(got) == 'table' and got.err then
  return 'bad key: ' .. got.err
end
local tat = now
if got then
  tat = tonumber(got)
  if not tat or tat ~= math.floor(tat) or tat < 0 or tat > 9007199254740992 then
    return 'bad key: it holds ' .. tostring(got) .. ', not a tat'
  end
end

local function store(t)
  if t > now then
    redis.call('SET', KEYS[1], string.format('%.0f', t), 'PX', math.ceil((t - now) / 1000))
  else
    redis.call('DEL', KEYS[1])
  end
end

if n < 0 then
  if not got or tat ~= arg4 then
    return {0, 0, tat}
  end
  local t = math.max(tat - (-n) * interval, now)
  store(t)
  return {0, 0, t}
end

local maxwait = arg4

local base = math.max(tat, now)
local span = burst * interval
local due1 = base + interval - span
-- room / interval tokens are due by now + maxwait, rounded down, exactly.
local room = now + maxwait + span - base
local g = 0
if room >= interval then
  g = math.floor(room / interval)
  while g * interval > room do g = g - 1 end
  while (g + 1) * interval <= room do g = g + 1 end
  if g > n then g = n end
end
if g < 1 then
  return {0, due1 - now, tat}
end
local t = base + g * interval
store(t)
return {g, due1 - now, t}
