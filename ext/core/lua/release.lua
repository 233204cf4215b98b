--@keys lock rd q qd hd ws pk fk tk mb wl fw fl +w
-- The release script. KEYS: the lock key and the keys derived from it (see
-- --@keys), then the wake lists of the tickets our hold guessed would head
-- the queue (see heads). ARGV[1] our owner token; ARGV[2] a delay in ms, "0"
-- to give up now; ARGV[3] "1" fair. Its result (see lib/end.lua) is 1 when
-- we held the write hold, 2 a read hold, 0 when we held nothing and nobody
-- holds the resource, -1 when somebody else does. Giving up hands the
-- resource to the waiters. A delay leaves the reader '' (no owner is
-- empty) in our place for that long (never our token, so that not even we
-- take it again meanwhile) and wakes the head, so it sleeps until the new end rather than
-- its old bound.

local H, hints, watchers = {'0', '0'}, {}, true
-- Runs as a function, which lib/end.lua closes.
local function run()
-- Our hold, the only one, nobody waits: nothing to hand on, so nothing else to define.
-- The lock key says our token for our write hold, '' for readers (no owner is empty).
local me, delay = ARGV[1], ARGV[2]
local v = redis.call('GET', lock)
-- Which of the queue, the hand-off records and the waitUntilFree() callers exist, in one
-- call: EXISTS counts a key as often as it is named, q four times, hd twice, fw once.
local e = redis.call('EXISTS', q, q, q, q, hd, hd, fw)
local queued, records = e >= 4, e % 4 >= 2
-- Nobody can start waiting for the resource to be free while we run.
watchers = e % 2 == 1
-- The write hold when none of them exists: the common release, three calls.
if delay == '0' and v == me and e == 0 then
	redis.call('DEL', lock)
	return 1
end
if delay == '0' and (v == me or v == '') and not queued then
	if v == me then
		redis.call('DEL', lock)
		-- Other hand-off records have no live hold: we held the write hold. They go in time, whatever they were kept for.
		redis.call('HDEL', mb, me)
		if records and redis.call('ZREM', hd, me) == 1 and redis.call('PTTL', hd) == -1 then
			redis.call('PEXPIRE', hd, @LKC_RS_WAKE_TTL@)
			redis.call('PEXPIRE', mb, @LKC_RS_WAKE_TTL@)
		end
		return 1
	end
	-- The last reader leaves: the lock key and the readers' set go together.
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
--@include queue.lua
-- Our write hold, given up now, fair, while others wait: a live writer
-- heads the queue and no reader, cooldown or pending promotion is anywhere.
-- The head gets the hold as settle() would give it, with fewer calls (it
-- knows what settle() would look up again); anything else takes the
-- general way below.
if delay == '0' and v == me and ARGV[3] == '1' then
	local h = redis.call('LINDEX', q, 0)
	local d, ttl, m, t
	if h then d, ttl, m, t = entry(h) end
	local now = now_ms()
	if m == 'w' and d >= now and redis.call('EXISTS', rd, pk) == 0 then
		local w = redis.call('GET', ws)
		-- As in the other short way: the records left have no live hold, so none is kept for them.
		if records and forget(me) and redis.call('PTTL', hd) == -1 then
			redis.call('PEXPIRE', hd, @LKC_RS_WAKE_TTL@)
			redis.call('PEXPIRE', mb, @LKC_RS_WAKE_TTL@)
		end
		local given = {}
		give(h, ttl, m, t, d, now, given, true)
		send(given, now)
		-- Another waiter that watches goes on watching; else one is appointed, if anybody is left.
		appoint(now, given, w)
		return 1
	end
end
local fair, now = ARGV[3], now_ms()
-- Whoever releases picked up what was handed to it: its hand-off record goes.
if records and forget(me) then relife() end
local function cool()
	if cooldown(now) < now + tonumber(delay) then add_reader('', delay, now) end
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
if (v and v ~= '') or live_readers(now) > 0 then return -1 end
sync(now)
settle(fair)
return 0
--@include end.lua
