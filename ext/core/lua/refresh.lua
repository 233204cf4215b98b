--@keys lock rd q qd hd ws pk fk tk mb wl fw fl +w
-- The refresh script. KEYS as the release script's. ARGV[1] our owner
-- token, ARGV[2] the new TTL in ms, or "" for none. Its result (see
-- lib/end.lua) is as the release script's; a hold still ours gets a fresh
-- guess of whom its release serves. Waiters sleep at most the time they
-- last saw left, so a shorter hold wakes the head.

local H, hints, watchers = {'0', '0'}, {}, false
-- Runs as a function, which lib/end.lua closes.
local function run()
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
	H = heads()
	return 1
end
local now = now_ms()
local s = tonumber(redis.call('ZSCORE', rd, me) or '-1')
if s > now then
	add_reader(me, ttl, now)
	if ttl ~= '' and now + tonumber(ttl) < s then wake_head() end
	H = heads()
	return 2
end
if s >= 0 then
	redis.call('ZREM', rd, me)
	sync(now)
end
if (v and v ~= '') or live_readers(now) > 0 then return -1 end
return 0
--@include end.lua
