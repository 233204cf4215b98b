--@keys lock rd q qd fk
-- The inspect script (Store::inspect()): what the keys say of the resource, in one
-- read, writing nothing. Returns {mode, ttl, fence, n, owners (n), then the queue}:
-- mode 'w' a writer, 'r' readers, 'c' a cooldown alone, '' nobody; ttl the
-- milliseconds the hold has left (-1 none, -2 nobody holds); fence the fencing
-- counter (0 none made, or gone with an idle resource); the owners holding it
-- (the readers by their expiry); the queue: the waiters whose liveness deadline is
-- ahead, in the order a release serves them (at most LKC_RS_INSPECT_MAX).

--@include core.lua
local now = now_ms()
local v = redis.call('GET', lock)
local mode, ttl, out = '', -2, {}
if v and v ~= '' then
	mode, ttl, out[1] = 'w', redis.call('PTTL', lock), v
elseif v then
	local rs = redis.call('ZRANGEBYSCORE', rd, string.format('(%.0f', now), '+inf', 'WITHSCORES')
	local last, cool = 0, 0
	for i = 1, #rs, 2 do
		local e = tonumber(rs[i + 1])
		if rs[i] == '' then
			cool = e
		else
			out[#out + 1] = rs[i]
			if e > last then last = e end
		end
	end
	if #out > 0 then
		mode = 'r'
		if last >= @LKC_RS_FOREVER@ then ttl = -1 else ttl = last - now end
	elseif cool > 0 then
		mode, ttl = 'c', cool - now
	end
end
local reply = {mode, ttl, tonumber(redis.call('GET', fk) or '0'), #out}
for _, o in ipairs(out) do reply[#reply + 1] = o end
local hs = redis.call('LRANGE', q, 0, @LKC_RS_INSPECT_MAX@ - 1)
if #hs > 0 then
	local es = redis.call('HMGET', qd, unpack(hs))
	for i, h in ipairs(hs) do
		local d = tonumber(string.match(es[i] or '', '^(%d+):'))
		if d and d >= now then reply[#reply + 1] = h end
	end
end
return reply
