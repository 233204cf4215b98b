-- The queue: waking, hand-offs and the watch over them. It follows core.lua,
-- whose functions it uses, and fills the script's hints: the wake-ups whose
-- list the caller did not declare, which the caller pushes with the deliver
-- script ("y<ticket>" a hand-off waiting in the mailbox, "c<ticket>",
-- "f<ticket>" a hint). Nothing here reads ARGV.

-- Pushes why ("c" or "f") to the wake list of ticket t, or leaves it to the caller.
local function wake(t, why)
	if not t then return end
	local w = wk(t)
	if not w then
		hints[#hints + 1] = why .. t
		return
	end
	local p = redis.call('PTTL', w)
	redis.call('RPUSH', w, why)
	outlive(w, p, '0')
end
local function wake_head()
	local h = redis.call('LINDEX', q, 0)
	if h then
		local _, _, _, t = entry(h)
		wake(t, 'c')
	end
end
-- Forgets a waiter's entry (its place in the list goes separately) and its pending promotion (unless none is: clean).
local function drop(h, clean)
	redis.call('HDEL', qd, h)
	if not clean and redis.call('GET', pk) == h then redis.call('DEL', pk) end
end
-- A hand-off's record in the mailbox: the ticket of the list its message
-- goes to, whether it went there ("d") or waits for the caller's deliver
-- ("u"), the TTL of the hold and the message.
local function record(h)
	return string.match(redis.call('HGET', mb, h) or '', '^(%d+)|([du])|(%d*)|(.*)$')
end
-- Forgets the hand-off to h; returns whether there was one.
local function forget(h)
	redis.call('HDEL', mb, h)
	return redis.call('ZREM', hd, h) == 1
end
-- The first waiter whose liveness deadline is still ahead, its TTL, mode,
-- ticket and deadline; the dead before it are dropped (their wake lists,
-- which never hold a hand-off, expire).
local function live_head(now)
	while true do
		local h = redis.call('LINDEX', q, 0)
		if not h then return nil end
		local d, ttl, m, t = entry(h)
		if d and d >= now then return h, ttl, m, t, d end
		redis.call('LPOP', q)
		drop(h)
	end
end
-- Hands the head h what it waits for, with its TTL. A writer or promoter
-- is only served when no other reader lives, so the readers' set goes
-- (the promoter's own read hold with it). Its message goes out with send.
-- clean: no promotion is pending and no readers' set exists.
local function give(h, ttl, m, t, d, now, given, clean)
	redis.call('LPOP', q)
	drop(h, clean)
	local msg
	if m == 'r' then
		add_reader(h, ttl, now)
		msg = string.format('y@%.0f', now)
	else
		if not clean then redis.call('DEL', rd) end
		set_lock(h, ttl)
		msg = string.format('y%.0f@%.0f', bump(ttl), now)
	end
	given[#given + 1] = {h = h, t = t, ttl = ttl, d = d, msg = msg}
	given[h] = true
end
-- Sends the "y" of the hand-offs given, each with the guess of the next
-- tickets (see heads), to its waiter's list when the caller declared it,
-- else to the mailbox for the caller's deliver. A record of each lets the
-- watcher tell a hand-off never picked up: its grace starts when its "y" is
-- pushed; undelivered, the waiter's own next step takes the hold before its
-- liveness deadline, or it died.
local function send(given, now)
	local hs = table.concat(heads(), ':')
	for _, g in ipairs(given) do
		local msg, w, state, at = g.msg .. '#' .. hs, wk(g.t), 'd', now
		if w then
			redis.call('RPUSH', w, msg)
			-- A ticket is handed a hold once, and the life this gives its list is the longest it gets.
			outlive(w, -2, g.ttl)
		else
			state, at = 'u', g.d - @LKC_RS_GRACE@
			hints[#hints + 1] = 'y' .. g.t
		end
		local p, pm = redis.call('PTTL', hd), redis.call('PTTL', mb)
		redis.call('ZADD', hd, string.format('%.0f', at), g.h)
		redis.call('HSET', mb, g.h, g.t .. '|' .. state .. '|' .. g.ttl .. '|' .. msg)
		outlive(hd, p, g.ttl)
		outlive(mb, pm, g.ttl)
	end
end
-- After hand-offs: unless a waiter still queued watches already, one is
-- told to: the one that has slept longest, by a "w" (with the tickets to
-- look at) on the list every waiter sleeps on besides its own. The watch
-- is marked taken ("", which no owner is) until a waiter claims it.
local function appoint(now, given, w)
	if w == nil then w = redis.call('GET', ws) end
	if w and not given[w] then return end
	if live_head(now) then
		local ts = {}
		for i, g in ipairs(given) do ts[i] = g.t end
		redis.call('DEL', wl)
		redis.call('RPUSH', wl, 'w' .. table.concat(ts, ','))
		redis.call('PEXPIRE', wl, @LKC_RS_GRACE@ * 2)
		redis.call('SET', ws, '', 'PX', @LKC_RS_GRACE@ * 2)
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
	if v and v ~= '' then return false end
	local now = now_ms()
	local n, cool = 0, false
	if redis.call('EXISTS', rd) == 1 then
		n = live_readers(now)
		cool = cooldown(now) > 0
	end
	local given = {}
	while true do
		local h, ttl, m, t, d = live_head(now)
		if not h then break end
		local others = n
		if m == 'p' and redis.call('ZSCORE', rd, h) then others = n - 1 end
		if (m == 'r' and cool) or (m ~= 'r' and others > 0) then break end
		if fair ~= '1' then
			wake(t, 'f')
			return true
		end
		give(h, ttl, m, t, d, now, given)
		if m ~= 'r' then break end
		n = n + 1
	end
	if #given == 0 then return false end
	send(given, now)
	appoint(now, given)
	return true
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
	redis.call('PEXPIRE', mb, t)
end
-- The wake lists of hand-offs that reap (all: force release) must look at
-- and the caller did not declare, and those of a waiter me that it left
-- behind (see settled in acquire.lua): {"need", tickets...}, asked for before
-- a script writes anything, so that the caller sends it again with them.
local function needs(now, all, me)
	local upto = '+inf'
	if not all then upto = string.format('%.0f', now - @LKC_RS_GRACE@) end
	local t = {'need'}
	for _, h in ipairs(redis.call('ZRANGEBYSCORE', hd, '-inf', upto)) do
		local k, s = record(h)
		if s == 'd' and not declared[k] then t[#t + 1] = k end
	end
	if me then
		local k, s = record(me)
		local e = string.match(redis.call('HGET', qd, me) or '', ':(%d+)$')
		if s == 'd' and not declared[k] then t[#t + 1] = k end
		if e and not declared[e] then t[#t + 1] = e end
	end
	if #t > 1 then return t end
end
-- Breaks the holds handed over more than the grace ago whose "y" is still
-- unread (or was never pushed, and the waiter's liveness deadline passed):
-- their waiter died. Returns whether it broke one.
local function reap(now)
	if redis.call('EXISTS', hd) == 0 then return false end
	local broke = false
	for _, h in ipairs(redis.call('ZRANGEBYSCORE', hd, '-inf', string.format('%.0f', now - @LKC_RS_GRACE@))) do
		local t, s = record(h)
		local w, unread = wk(t), s == 'u'
		if s == 'd' and w then
			local m = redis.call('LINDEX', w, -1)
			unread = m and string.sub(m, 1, 1) == 'y'
		end
		forget(h)
		if unread then
			if w then redis.call('DEL', w) end
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
