-- The end of the scripts that take wake lists (--@keys ... +w). They run as
-- a function, opened by their own "local function run()" and closed here,
-- after locals H (see heads), hints (see queue.lua) and watchers. Whatever way
-- run() ends, the answer is {its result, H[1], H[2], hints...} (its result
-- alone when it is a number and there is neither guess nor hint), or run()'s
-- {"need", tickets...} as it is (nothing was written). When watchers is
-- true and the resource is free after it (no lock key, nobody queued), the
-- waitUntilFree() callers are woken: one "f" each on the list they share.
-- One EXISTS when nobody watches.
end
local r = run()
if type(r) == 'table' and r[1] == 'need' then return r end
if watchers and redis.call('EXISTS', fw) == 1 and redis.call('EXISTS', lock, q) == 0 then
	local f = {}
	for i = 1, math.min(redis.call('SCARD', fw), 1000) do f[i] = 'f' end
	redis.call('RPUSH', fl, unpack(f))
	redis.call('PEXPIRE', fl, @LKC_RS_WAKE_TTL@)
	redis.call('DEL', fw)
end
-- A number with nothing else to say goes alone: the caller reads no guess as none.
if type(r) == 'number' and H[1] == '0' and H[2] == '0' and #hints == 0 then return r end
return {r, H[1], H[2], unpack(hints)}
