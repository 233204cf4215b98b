--@keys lock rd fk
-- The fencing token script. KEYS: the lock key, the readers, the counter.
-- ARGV[1] our owner token. Returns the fencing token of our write hold: the
-- counter's value, which no other take can have moved while we hold the lock,
-- after its jump when it is new. Else -2 when we hold a read hold, 0 nothing
-- and nobody holds the resource, -1 somebody else does.

--@include core.lua
local me = ARGV[1]
local v = redis.call('GET', lock)
if v == me then
	local f = tonumber(redis.call('GET', fk))
	if not f or f < 1e12 then f = bump() end
	return f
end
local now = now_ms()
local s = redis.call('ZSCORE', rd, me)
if s and tonumber(s) > now then return -2 end
if (v and v ~= '') or redis.call('ZCOUNT', rd, string.format('(%.0f', now), '+inf') > 0 then return -1 end
return 0
