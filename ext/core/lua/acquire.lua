--@keys lock rd q qd hd ws pk fk tk mb wl fw fl +w
-- Acquires, or takes one step of a wait. KEYS: the lock key and the keys
-- derived from it (see --@keys), then the wake lists of the tickets the
-- caller knows: its own, and those a watch message named. ARGV: [1] our
-- owner token, [2] our TTL in ms ("" none), [3] four letters: what we want,
-- "w" the write hold or "r" a read hold; how:
--   "t" one attempt: take it if we can, else nothing;
--   "q" take it if we can, else join the queue (once) and renew our deadline;
--   "l" (the wait is over) take it if we can, else leave the queue;
--   "i" (interrupted) leave the queue, and give back what was handed to us
--     meanwhile: a promoter returns to the read hold its caller still has;
-- "1" fair or "0"; what the caller holds: "w", "r" or "n" nothing. [4] how
-- long our liveness deadline lasts (ms). [5] our ticket ("" none yet).
-- What we hold already comes from the keys: the write hold (ours, or handed
-- to us) is taken again, a read hold refreshed or promoted, a write hold
-- demoted. Its result (see lib/end.lua) is the fencing token (> 0) when it
-- took the write hold, 0 a read hold, -1 not taken (or left), -2 not taken
-- because another reader's promotion is pending, {-3, ms, now, ticket}
-- queued: sleep ms at most (the time left of what blocks us, less while we
-- watch a hand-off; -1 no bound) on the wake list of ticket, now the
-- server's time in ms (the waiter maps a hand-off's time to its own clock
-- by it). Running a step twice is harmless (a write hold taken twice only
-- burns a fencing token), so an ambiguous failure is settled by sending it
-- again.

local H, hints, watchers = {'0', '0'}, {}, true
-- Runs as a function, which lib/end.lua closes.
local function run()
--@include core.lua
local me, ttl, own = ARGV[1], ARGV[2], ARGV[5]
local want, how = string.sub(ARGV[3], 1, 1), string.sub(ARGV[3], 2, 2)
-- Our place in the queue: its entry keeps its ticket (we declared its list), else gets a new one.
local function place(e)
	local t = e and string.match(e, ':(%d+)$')
	if t and declared[t] then return t end
	return ticket()
end
-- Empties our wake lists, what was pushed to us before this step being settled by it: the list
-- of the ticket we slept on, of the one in our entry, and (handed: we take a hold that was
-- handed to us) of the one its "y" went to.
local function settled(e, handed)
	local r = handed and redis.call('HGET', mb, me)
	local done = {}
	for _, t in ipairs({own, e and string.match(e, ':(%d+)$') or '', r and string.match(r, '^(%d+)|') or ''}) do
		local w = not done[t] and wk(t)
		done[t] = true
		if w then redis.call('DEL', w) end
	end
end
-- A writer that holds nothing joins the queue while another writer
-- holds the resource: the common step of a wait, first, in half the
-- calls. It ends as the general way below would, and only where that
-- would break no hold, meet no reader and appoint no watcher: no reader
-- (nor cooldown) exists, no hand-off on record is past its grace, and
-- another waiter watches (or nothing is pending and nobody watches).
if want == 'w' and how == 'q' and string.sub(ARGV[3], 4, 4) == 'n' then
	local v = redis.call('GET', lock)
	if v and v ~= me and v ~= '' and redis.call('EXISTS', rd) == 0 then
		local now = now_ms()
		local first = redis.call('ZRANGE', hd, 0, 0, 'WITHSCORES')
		local pend = first[2] and tonumber(first[2]) + @LKC_RS_GRACE@ - now
		local w = (not pend or pend > 0) and redis.call('GET', ws)
		local e = redis.call('HGET', qd, me)
		local et = e and string.match(e, ':(%d+)$')
		if ((w and w ~= me) or (w == false and not pend)) and (not et or declared[et]) then
			local stay = tonumber(ARGV[4])
			local t = place(e)
			settled(e)
			redis.call('HSET', qd, me, string.format('%.0f:%s:w:%s', now + stay, ttl, t))
			if not e then redis.call('RPUSH', q, me) end
			if redis.call('PTTL', q) < stay then redis.call('PEXPIRE', q, stay) end
			if redis.call('PTTL', qd) < stay then redis.call('PEXPIRE', qd, stay) end
			return {-3, math.max(redis.call('PTTL', lock), -1), now, t}
		end
	end
end
local easy = (how == 't' or how == 'q') and redis.call('EXISTS', lock, q) == 0
-- Nobody holds it, nobody waits: take it at once, a read hold before
-- anything else is defined. The reader is then alone: the readers' set
-- (of the dead, if any) starts anew.
if easy and want == 'r' then
	redis.call('DEL', rd)
	if ttl == '' then
		redis.call('SET', lock, '')
		redis.call('ZADD', rd, '@LKC_RS_FOREVER@', me)
	else
		redis.call('SET', lock, '', 'PX', ttl)
		redis.call('ZADD', rd, string.format('%.0f', now_ms() + tonumber(ttl)), me)
		redis.call('PEXPIRE', rd, ttl)
	end
	H = heads()
	return 0
end
-- The write hold (a blocking acquire: a single attempt is a transaction, see lkc_rs_try_write).
if easy then
	set_lock(me, ttl)
	local f = bump(ttl)
	H = heads()
	return f
end
--@include queue.lua
local fair, held, stay = string.sub(ARGV[3], 3, 3), string.sub(ARGV[3], 4, 4), tonumber(ARGV[4])
-- Leaves the queue (if in it) and the watch; returns whether the head or the watcher left.
local function leave()
	local first = redis.call('LINDEX', q, 0) == me
	redis.call('LREM', q, 0, me)
	settled(redis.call('HGET', qd, me), true)
	drop(me)
	if forget(me) then relife() end
	if redis.call('GET', ws) == me then
		redis.call('DEL', ws)
		first = true
	end
	return first
end
-- After leaving: the queue may now be served; else whoever heads it looks again, to take or to watch.
local function after(first)
	if not settle(fair) and first then wake_head() end
end
-- Only called when no other reader lives: the readers' set goes, our own read hold with it.
local function take_write()
	redis.call('DEL', rd)
	set_lock(me, ttl)
	local f = bump(ttl)
	after(leave())
	H = heads()
	return f
end
local function take_read(now)
	add_reader(me, ttl, now)
	after(leave())
	H = heads()
	return 0
end
-- Whether a live writer or promoter waits ahead of us (anywhere in the queue when we are not in it).
local function writer_ahead(now)
	for _, h in ipairs(redis.call('LRANGE', q, 0, -1)) do
		if h == me then return false end
		local d, _, m = entry(h)
		if d and d >= now and m ~= 'r' then return true end
	end
	return false
end
-- Joins the queue, a promoter at its front, or renews our entry there; returns our ticket.
local function join(m, now)
	local e = redis.call('HGET', qd, me)
	if not e then
		if m == 'p' then redis.call('LPUSH', q, me) else redis.call('RPUSH', q, me) end
	end
	local t = place(e)
	settled(e)
	redis.call('HSET', qd, me, string.format('%.0f:%s:%s:%s', now + stay, ttl, m, t))
	-- The queue outlives every live waiter's deadline, and vanishes when all of them died.
	if redis.call('PTTL', q) < stay then redis.call('PEXPIRE', q, stay) end
	if redis.call('PTTL', qd) < stay then redis.call('PEXPIRE', qd, stay) end
	if m == 'p' then redis.call('SET', pk, me, 'PX', stay) end
	return t
end
local now = now_ms()
local need = needs(now, false, me)
if need then return need end
if reap(now) then settle(fair) end
local v = redis.call('GET', lock)
local n = live_readers(now)
local free = not v or v == ''
local mine = nil
if v == me then
	mine = 'w'
elseif redis.call('ZSCORE', rd, me) then
	mine = 'r'
end
if how == 'i' then
	local first = leave()
	if mine == 'w' and held == 'r' then
		add_reader(me, ttl, now)
	elseif mine == 'w' and held == 'n' then
		redis.call('DEL', lock)
	elseif mine == 'r' and held == 'n' then
		redis.call('ZREM', rd, me)
		sync(now)
	end
	after(first)
	return -1
end
local t
if want == 'w' then
	if mine == 'w' then return take_write() end
	if free and (n == 0 or (n == 1 and mine == 'r')) then
		-- Free for us. A promoter goes first; fair, anybody else only when no live waiter is ahead.
		if mine == 'r' or fair ~= '1' then return take_write() end
		local h = live_head(now)
		if not h or h == me then return take_write() end
		settle(fair)
	end
	if mine == 'r' then
		local p = redis.call('GET', pk)
		if p and p ~= me then
			if how ~= 't' then after(leave()) end
			return -2
		end
	end
	if how == 't' then return -1 end
	if how == 'l' then
		after(leave())
		return -1
	end
	if mine == 'r' then t = join('p', now) else t = join('w', now) end
else
	if mine then return take_read(now) end
	if free and cooldown(now) == 0 and not writer_ahead(now) then return take_read(now) end
	if how == 't' then return -1 end
	if how == 'l' then
		after(leave())
		return -1
	end
	t = join('r', now)
end
-- Queued. Only the watcher sleeps short, to look at a pending hand-off once
-- its grace is over; a watch marked taken ("") goes to whoever steps first.
local bound = pending(now)
local w = redis.call('GET', ws)
if bound and (not w or w == me or w == '') then
	redis.call('SET', ws, me, 'PX', bound + @LKC_RS_GRACE@)
else
	if w == me then redis.call('DEL', ws) end
	bound = nil
end
-- What blocks us lasts as long as the lock key, or a cooldown, which ends sooner for readers.
local left = math.max(redis.call('PTTL', lock), -1)
local c = cooldown(now)
if c > 0 and (left < 0 or c - now < left) then left = c - now end
if bound and (left < 0 or bound < left) then left = bound end
return {-3, left, now, t}
--@include end.lua
