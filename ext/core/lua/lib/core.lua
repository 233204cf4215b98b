-- The start of every script but watch and deliver: the server's clock read
-- once per run, the fencing counter and the tickets, the wake lists, the
-- readers. The keys are those the top of lkc_redis.c lists, declared by the
-- script's --@keys line; the @NAME@ constants are lkc_redis_lua_const.h's.
-- Owners are 1 to 255 bytes, so the empty string is the one marker: the lock
-- key says '' while readers hold, and the reader '' is a cooldown.
local clock
local function now_ms()
	if not clock then clock = redis.call('TIME') end
	return tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
end
-- The next value of counter k: a new one (below 10^12) jumps to the clock in
-- microseconds, above every value handed out before (see the top of lkc_redis.c).
local function count(k)
	local f = redis.call('INCR', k)
	if f < 1e12 then
		now_ms()
		local t = tonumber(clock[1]) * 1000000 + tonumber(clock[2])
		if t > f then
			f = t
			redis.call('SET', k, string.format('%.0f', f))
		end
	end
	return f
end
-- The next fencing token; ttl: the TTL ("" none) the lock key was just given, else it is looked up.
local function bump(ttl)
	local f = count(fk)
	-- It goes when the resource stays idle long enough: LKC_RS_FENCE_TTL, shorter for short holds.
	local px, l = @LKC_RS_FENCE_TTL@, tonumber(ttl)
	if not ttl then l = redis.call('PTTL', lock) end
	if l and l > 0 and l * @LKC_RS_FENCE_TTLS@ < px then px = l * @LKC_RS_FENCE_TTLS@ end
	redis.call('PEXPIRE', fk, px)
	return f
end
-- A new waiter's ticket, which names its wake list: never the same twice, as
-- fencing tokens. The counter may go with the queue: a new one jumps.
local function ticket()
	local t = count(tk)
	redis.call('PEXPIRE', tk, @LKC_RS_WAKE_TTL@)
	return string.format('%.0f', t)
end
-- The wake list of ticket t when the caller declared it, else nil: nothing
-- else names a wake list, so a script touches no list it was not given.
local function wk(t)
	if t and declared[t] then return lock .. ':w:' .. t end -- the accessor
end
-- After a push to a wake list or the hand-off records k, whose PTTL was p
-- before it: makes k live at least LKC_RS_WAKE_TTL, and as long as a hold
-- of ttl ms ("" none) handed over now. A record of a hand-off whose
-- waiter died must outlast the hold, however quiet the resource stays, or
-- nobody could tell that the hold was never picked up. A life is never
-- shortened (p -1: none).
local function outlive(k, p, ttl)
	if p == -1 then return end
	if ttl == '' then
		redis.call('PERSIST', k)
		return
	end
	local t = math.max(tonumber(ttl) + @LKC_RS_GRACE@, @LKC_RS_WAKE_TTL@)
	if p < t then redis.call('PEXPIRE', k, t) end
end
local function set_lock(who, ttl)
	if ttl == '' then
		redis.call('SET', lock, who)
	else
		redis.call('SET', lock, who, 'PX', ttl)
	end
end
-- After the readers changed: their set and the readers' lock key ('') live
-- exactly as long as the longest-lived member, and go when none is alive.
local function sync(now)
	local top = redis.call('ZRANGE', rd, -1, -1, 'WITHSCORES')
	local e = tonumber(top[2] or '0')
	local shared = redis.call('GET', lock) == ''
	if e <= now then
		redis.call('DEL', rd)
		if shared then redis.call('DEL', lock) end
	elseif e >= @LKC_RS_FOREVER@ then
		redis.call('PERSIST', rd)
		if shared then redis.call('PERSIST', lock) end
	else
		local at = string.format('%.0f', e)
		redis.call('PEXPIREAT', rd, at)
		if shared then redis.call('PEXPIREAT', lock, at) end
	end
end
-- Adds or renews the reader who (the cooldown: '') until ttl ms ("" none)
-- from now. The lock key says '' unless another writer holds it, which
-- only a hold outliving its TTL can make happen.
local function add_reader(who, ttl, now)
	local e = @LKC_RS_FOREVER@
	if ttl ~= '' then e = now + tonumber(ttl) end
	local v = redis.call('GET', lock)
	if not v or v == who then redis.call('SET', lock, '') end
	redis.call('ZADD', rd, string.format('%.0f', e), who)
	sync(now)
end
-- How many readers are alive (the cooldown counts: it keeps writers out); the dead are pruned.
local function live_readers(now)
	redis.call('ZREMRANGEBYSCORE', rd, '-inf', string.format('%.0f', now))
	return redis.call('ZCARD', rd)
end
-- When a cooldown (the reader '') keeping everybody out ends (server ms), 0 when none runs.
local function cooldown(now)
	local c = tonumber(redis.call('ZSCORE', rd, '') or '0')
	if c > now then return c end
	return 0
end
-- A waiter's liveness deadline (nil when gone or malformed), the TTL it asked for, its mode and its ticket.
local function entry(h)
	local d, ttl, m, t = string.match(redis.call('HGET', qd, h) or '', '^(%d+):(%d*):([wrp]):(%d+)$')
	return tonumber(d), ttl, m, t
end
-- The holder's guess of whom its release serves, answered with every hold
-- taken (H) and carried by a hand-off's message: the tickets of the first two
-- waiters, and after them the next arrivals' ("0" unknown).
local function heads()
	local t = {}
	for _, h in ipairs(redis.call('LRANGE', q, 0, 1)) do
		local _, _, _, k = entry(h)
		t[#t + 1] = k or '0'
	end
	if #t == 2 then return t end
	local n = tonumber(redis.call('GET', tk) or '0')
	while #t < 2 do
		if n > 0 then n = n + 1 end
		t[#t + 1] = string.format('%.0f', n)
	end
	return t
end
