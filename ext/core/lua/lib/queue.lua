-- The queue: waking, hand-offs and the watch over them. It follows core.lua,
-- whose functions it uses. Nothing here reads ARGV.
local qd, ws, hd, pk = lock .. ':qd', lock .. ':ws', lock .. ':h', lock .. ':p'
local function wake(token, why, ttl)
	local w = lock .. ':w:' .. token
	local p = redis.call('PTTL', w)
	redis.call('RPUSH', w, why)
	outlive(w, p, ttl or '0')
end
local function wake_head()
	local h = redis.call('LINDEX', q, 0)
	if h then wake(h, 'c') end
end
-- A waiter's liveness deadline (nil when gone or malformed), the TTL it asked for and its mode.
local function entry(h)
	local d, ttl, m = string.match(redis.call('HGET', qd, h) or '', '^(%d+):(%d*):([wrp])$')
	return tonumber(d), ttl, m
end
-- Forgets a waiter's entry (its place in the list goes separately) and its pending promotion.
local function drop(h)
	redis.call('HDEL', qd, h)
	if redis.call('GET', pk) == h then redis.call('DEL', pk) end
end
-- The first waiter whose liveness deadline is still ahead, its TTL and mode; the dead before it are dropped.
local function live_head(now)
	while true do
		local h = redis.call('LINDEX', q, 0)
		if not h then return nil end
		local d, ttl, m = entry(h)
		if d and d >= now then return h, ttl, m end
		redis.call('LPOP', q)
		drop(h)
		redis.call('DEL', lock .. ':w:' .. h)
	end
end
-- Hands the head h what it waits for, with its TTL. A writer or promoter
-- is only served when no other reader lives, so the readers' set goes
-- (the promoter's own read hold with it).
local function give(h, ttl, m, now, given)
	redis.call('LPOP', q)
	drop(h)
	if m == 'r' then
		add_reader(h, ttl, now)
		wake(h, string.format('y@%.0f', now), ttl)
	else
		redis.call('DEL', rd)
		set_lock(h, ttl)
		wake(h, string.format('y%.0f@%.0f', bump(), now), ttl)
	end
	local p = redis.call('PTTL', hd)
	redis.call('ZADD', hd, string.format('%.0f', now), h)
	outlive(hd, p, ttl)
	given[h] = true
end
-- After hand-offs: unless a waiter still queued watches already, one is
-- told to: the tail, as the last to be served it watches longest, or else
-- the head.
local function appoint(now, given)
	local w = redis.call('GET', ws)
	if w and not given[w] then return end
	local n = redis.call('LINDEX', q, -1)
	local d = n and entry(n)
	if not d or d < now then n = live_head(now) end
	if n then
		wake(n, 'w')
		redis.call('SET', ws, n, 'PX', @LKC_RS_GRACE@ * 2)
	elseif w then
		redis.call('DEL', ws)
	end
end
-- The resource may have come free for the queue. Fair: hand it to the
-- head, a writer alone (a promoter may still read itself) or every reader
-- at the head at once. Unfair: wake the head if it could take it. Returns
-- whether it handed or woke anybody.
local function settle(fair)
	if redis.call('LLEN', q) == 0 then return false end
	local v = redis.call('GET', lock)
	if v and v ~= 'shared' then return false end
	local now = now_ms()
	local n = live_readers(now)
	local cool = cooldown(now) > 0
	local given, any = {}, false
	while true do
		local h, ttl, m = live_head(now)
		if not h then break end
		local others = n
		if m == 'p' and redis.call('ZSCORE', rd, h) then others = n - 1 end
		if (m == 'r' and cool) or (m ~= 'r' and others > 0) then break end
		if fair ~= '1' then
			wake(h, 'f')
			return true
		end
		give(h, ttl, m, now, given)
		any = true
		if m ~= 'r' then break end
		n = n + 1
	end
	if any then appoint(now, given) end
	return any
end
-- After records left the hand-off records: when they were kept without an
-- expiry (a hold without a TTL was handed over), they keep it only while
-- a member still has such a hold, else they live as long as the longest
-- hold of a member (LKC_RS_WAKE_TTL at least).
local function relife()
	if redis.call('PTTL', hd) ~= -1 then return end
	local t, now = @LKC_RS_WAKE_TTL@, now_ms()
	for _, h in ipairs(redis.call('ZRANGE', hd, 0, -1)) do
		local l = 0
		if redis.call('GET', lock) == h then
			l = redis.call('PTTL', lock)
		else
			local e = tonumber(redis.call('ZSCORE', rd, h) or '0')
			if e >= @LKC_RS_FOREVER@ then l = -1 elseif e > now then l = e - now end
		end
		if l == -1 then return end
		if l + @LKC_RS_GRACE@ > t then t = l + @LKC_RS_GRACE@ end
	end
	redis.call('PEXPIRE', hd, t)
end
-- Breaks the holds handed over more than the grace ago whose "y" is still
-- unread: their waiter died. Returns whether it broke one.
local function reap(now)
	if redis.call('EXISTS', hd) == 0 then return false end
	local broke = false
	for _, h in ipairs(redis.call('ZRANGEBYSCORE', hd, '-inf', string.format('%.0f', now - @LKC_RS_GRACE@))) do
		redis.call('ZREM', hd, h)
		local w = lock .. ':w:' .. h
		local m = redis.call('LINDEX', w, -1)
		if m and string.sub(m, 1, 1) == 'y' then
			redis.call('DEL', w)
			if redis.call('GET', lock) == h then
				redis.call('DEL', lock)
				broke = true
			end
			if redis.call('ZREM', rd, h) == 1 then
				sync(now)
				broke = true
			end
		end
	end
	relife()
	return broke
end
-- How long until the oldest pending hand-off has had its grace (ms), or nil when none is pending.
local function pending(now)
	local first = redis.call('ZRANGE', hd, 0, 0, 'WITHSCORES')
	if not first[2] then return nil end
	return math.max(tonumber(first[2]) + @LKC_RS_GRACE@ - now, 0)
end
