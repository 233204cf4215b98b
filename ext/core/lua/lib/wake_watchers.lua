-- The end of the scripts that can leave a resource free (release, force
-- release, a step of a waiter). They run as a function, opened by their own
-- "local function run()" and closed here, so that whatever way they end, the
-- watchers (waitUntilFree() callers) are woken after it when the resource is
-- free: no lock key and nobody queued. One EXISTS when nobody watches.
end
local r = run()
local fw = KEYS[1] .. ':fw'
if redis.call('EXISTS', fw) == 1 and redis.call('EXISTS', KEYS[1], KEYS[1] .. ':q') == 0 then
	for _, t in ipairs(redis.call('SMEMBERS', fw)) do
		local w = KEYS[1] .. ':w:' .. t
		redis.call('RPUSH', w, 'f')
		redis.call('PEXPIRE', w, @LKC_RS_WAKE_TTL@)
	end
	redis.call('DEL', fw)
end
return r
