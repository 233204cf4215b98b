--@keys lock qd hd mb +w
-- The deliver script: pushes the wake-ups another script left to the caller
-- because their wake lists were not declared there. KEYS: the lock key, the
-- waiters' entries, the hand-off records and the mailbox, then the wake
-- lists of the tickets named in ARGV: "y<ticket>" the hand-off to that
-- ticket waiting in the mailbox, "c<ticket>" or "f<ticket>" a hint (see the
-- top of lkc_redis.c). A hand-off taken back or picked up meanwhile has left
-- the mailbox and is not pushed; one pushed starts its grace now. A hint
-- goes only to a waiter still queued with that ticket: one that took its
-- step meanwhile needs none. Returns how many it pushed.

--@include core.lua
local n, now = 0, nil
for _, a in ipairs(ARGV) do
	local why, t = string.sub(a, 1, 1), string.sub(a, 2)
	local w = wk(t)
	if w and why == 'y' then
		local box = redis.call('HGETALL', mb)
		now = now or now_ms()
		for i = 1, #box, 2 do
			local rt, s, ttl, msg = string.match(box[i + 1], '^(%d+)|([du])|(%d*)|(.*)$')
			if rt == t and s == 'u' then
				local p = redis.call('PTTL', w)
				redis.call('RPUSH', w, msg)
				outlive(w, p, ttl)
				redis.call('HSET', mb, box[i], rt .. '|d|' .. ttl .. '|' .. msg)
				redis.call('ZADD', hd, 'XX', string.format('%.0f', now), box[i])
				n = n + 1
			end
		end
	elseif w and (why == 'c' or why == 'f') then
		for _, e in ipairs(redis.call('HVALS', qd)) do
			if string.match(e, ':(%d+)$') == t then
				local p = redis.call('PTTL', w)
				redis.call('RPUSH', w, why)
				outlive(w, p, '0')
				n = n + 1
				break
			end
		end
	end
end
return n
