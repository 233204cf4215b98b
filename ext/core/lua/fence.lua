--@keys lock rd fk
-- The fencing token script. KEYS: the lock key, the readers, the counter.
-- ARGV[1] our owner token. Returns a fencing token for our write hold: the
-- counter's next value (after its jump when it is new), made while we hold
-- the lock, so above the token of every hold before ours and below those
-- after it. Our take may have made one already (lost with its answer), or
-- made none (a single attempt takes one only for a store asked for tokens
-- before); either way a new one is right. Else -2 when we hold a read hold,
-- 0 nothing and nobody holds the resource, -1 somebody else does.

--@include core.lua
local me = ARGV[1]
local v = redis.call('GET', lock)
if v == me then return bump() end
local now = now_ms()
local s = redis.call('ZSCORE', rd, me)
if s and tonumber(s) > now then return -2 end
if (v and v ~= '') or redis.call('ZCOUNT', rd, string.format('(%.0f', now), '+inf') > 0 then return -1 end
return 0
