--@keys lock fk
-- The fencing floor script, for the combined store (lkc_combined.c), which
-- hands out the greatest of its servers' tokens and so must leave every
-- counter of its majority at least that high. KEYS: the lock key, the
-- counter. ARGV[1] our owner token, ARGV[2] the floor. While we hold the
-- write hold, raises the counter to the floor (never lowers it) and returns
-- 1; else returns 0 and changes nothing.

local me, floor = ARGV[1], tonumber(ARGV[2])
if redis.call('GET', lock) ~= me then return 0 end
local f = tonumber(redis.call('GET', fk) or '0')
if f < floor then
	redis.call('SET', fk, ARGV[2], 'KEEPTTL')
	if redis.call('PTTL', fk) < 0 then redis.call('PEXPIRE', fk, @LKC_RS_FENCE_TTL@) end
end
return 1
