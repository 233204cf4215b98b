-- The release script. KEYS[1] the lock key.
-- ARGV[1] our owner token; ARGV[2] a delay in ms, "0" to give up now;
-- ARGV[3] "1" fair. Returns 1 when we held the write hold, 2 a read hold, 0
-- when we held nothing and nobody holds the resource, -1 when somebody else
-- does. Giving up hands the resource to the waiters. A delay leaves the
-- reader "cooldown" in our place for that long (never our token, so that not
-- even we take it again meanwhile) and wakes the head, so it sleeps until the
-- new end rather than its old bound.

-- Runs as a function, which lib/wake_watchers.lua closes.
local function run()
-- Our hold, the only one, nobody waits: nothing to hand on, so nothing else to define.
local lock, me, delay = KEYS[1], ARGV[1], ARGV[2]
local v = redis.call('GET', lock)
if delay == '0' and (v == me or v == 'shared') and redis.call('EXISTS', lock .. ':q') == 0 then
	if v == me then
		redis.call('DEL', lock)
		-- Other hand-off records have no live hold: we held the write hold. They go in time, whatever they were kept for.
		if redis.call('ZREM', lock .. ':h', me) == 1 and redis.call('PTTL', lock .. ':h') == -1 then
			redis.call('PEXPIRE', lock .. ':h', @LKC_RS_WAKE_TTL@)
		end
		return 1
	end
	-- The last reader leaves: the lock key and the readers' set go together.
	local rd = lock .. ':r'
	local s = redis.call('ZSCORE', rd, me)
	if s and redis.call('ZCARD', rd) == 1 then
		local t = redis.call('TIME')
		if tonumber(s) > tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) then
			redis.call('DEL', lock, rd)
			return 2
		end
	end
end
--@include core.lua
-- Our write hold, given up now, fair, while others wait: a live writer
-- heads the queue, no reader or cooldown is anywhere, and another waiter
-- watches. The head gets the hold as settle() would give it, in half the
-- calls and before the queue's functions are defined; anything else
-- takes the general way below.
if delay == '0' and v == me and ARGV[3] == '1' then
	local qd, hd, h = lock .. ':qd', lock .. ':h', redis.call('LINDEX', q, 0)
	local d, ttl, m = string.match(h and redis.call('HGET', qd, h) or '', '^(%d+):(%d*):(w)$')
	local w = m and redis.call('GET', lock .. ':ws')
	if w and w ~= h and redis.call('EXISTS', rd, lock .. ':p') == 0 and tonumber(d) >= now_ms() then
		redis.call('LPOP', q)
		redis.call('HDEL', qd, h)
		set_lock(h, ttl)
		local wk = lock .. ':w:' .. h
		local f, p = bump(), redis.call('PTTL', wk)
		redis.call('RPUSH', wk, string.format('y%.0f@%.0f', f, now_ms()))
		outlive(wk, p, ttl)
		redis.call('ZREM', hd, me)
		-- As in the other short way: the records left have no live hold, so none is kept for them.
		p = math.max(redis.call('PTTL', hd), 0)
		redis.call('ZADD', hd, string.format('%.0f', now_ms()), h)
		outlive(hd, p, ttl)
		return 1
	end
end
--@include queue.lua
local fair, now = ARGV[3], now_ms()
-- Whoever releases picked up what was handed to it: its hand-off record goes.
if redis.call('ZREM', hd, me) == 1 then relife() end
local function cool()
	if cooldown(now) < now + tonumber(delay) then add_reader('cooldown', delay, now) end
	wake_head()
end
if v == me then
	redis.call('DEL', lock)
	if delay ~= '0' then cool() else settle(fair) end
	return 1
end
local s = tonumber(redis.call('ZSCORE', rd, me) or '-1')
if s > now then
	redis.call('ZREM', rd, me)
	if delay ~= '0' then
		cool()
	else
		sync(now)
		settle(fair)
	end
	return 2
end
if s >= 0 then redis.call('ZREM', rd, me) end
if (v and v ~= 'shared') or live_readers(now) > 0 then return -1 end
sync(now)
settle(fair)
return 0
--@include wake_watchers.lua
