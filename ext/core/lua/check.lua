--@keys lock rd q qd hd ws pk fk tk mb wl fw fl +w
-- The check script (is a hold still held). KEYS as the release script's.
-- ARGV[1] an owner token, ARGV[2] "1" fair. Its result (see lib/end.lua) is
-- 1 when it holds the write hold, 2 a read hold, 0 when nobody holds the
-- resource, -1 somebody else. Changes nothing but a hold handed to a waiter
-- that died (see reap), which it breaks and hands on first.

local H, hints, watchers = {'0', '0'}, {}, false
-- Runs as a function, which lib/end.lua closes.
local function run()
--@include core.lua
--@include queue.lua
local me = ARGV[1]
local now = now_ms()
-- A hold handed to a waiter that died is nobody's: break it (and hand on) before answering.
local need = needs(now)
if need then return need end
if reap(now) then settle(ARGV[2]) end
local v = redis.call('GET', lock)
if v == me then return 1 end
local s = redis.call('ZSCORE', rd, me)
if s and tonumber(s) > now then return 2 end
if (v and v ~= '') or redis.call('ZCOUNT', rd, string.format('(%.0f', now), '+inf') > 0 then return -1 end
return 0
--@include end.lua
