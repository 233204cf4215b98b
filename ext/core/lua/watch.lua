--@keys lock q hd fw fl
-- The step of a waitUntilFree() caller. KEYS: the lock key and the keys
-- derived from it (see --@keys). ARGV[1] its token, ARGV[2] how long its
-- entry lives (ms), ARGV[3] "w" to watch, "l" to leave. Returns -1 when the
-- resource is free (no lock key, nobody queued: the caller is not registered
-- then), else {the lock key's PTTL (-1 none, -2 gone), 1 when a hand-off is
-- on record} with the caller registered in P{R}:fw, asleep on the list the
-- watchers share (P{R}:fl); 0 after "l". It needs none of lib/.

local me = ARGV[1]
if ARGV[3] == 'l' or redis.call('EXISTS', lock, q) == 0 then
	redis.call('SREM', fw, me)
	if ARGV[3] == 'l' then return 0 end
	return -1
end
redis.call('SADD', fw, me)
if redis.call('PTTL', fw) < tonumber(ARGV[2]) then redis.call('PEXPIRE', fw, ARGV[2]) end
return {redis.call('PTTL', lock), redis.call('EXISTS', hd)}
