-- The refresh script. KEYS[1] the lock key.
-- As the release script, with ARGV[2] the new TTL in ms, or "" for none.
-- Waiters sleep at most the time they last saw left, so a shorter hold wakes
-- the head.

--@include core.lua
--@include queue.lua
local me, ttl = ARGV[1], ARGV[2]
local v = redis.call('GET', lock)
if v == me then
	if ttl == '' then
		redis.call('PERSIST', lock)
	else
		local left = redis.call('PTTL', lock)
		redis.call('PEXPIRE', lock, ttl)
		if left < 0 or left > tonumber(ttl) then wake_head() end
	end
	return 1
end
local now = now_ms()
local s = tonumber(redis.call('ZSCORE', rd, me) or '-1')
if s > now then
	add_reader(me, ttl, now)
	if ttl ~= '' and now + tonumber(ttl) < s then wake_head() end
	return 2
end
if s >= 0 then
	redis.call('ZREM', rd, me)
	sync(now)
end
if (v and v ~= 'shared') or live_readers(now) > 0 then return -1 end
return 0
