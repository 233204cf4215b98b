--@keys lock q hd fw
-- The release of a write hold taken while nobody had queued for LKC_RS_WAKE_TTL (its
-- holder guessed no ticket to hand to), without a delay: the commonest release, in three
-- calls and four keys instead of the release script's thirteen. ARGV[1] our owner token.
-- 1: we held the write hold and no queue, hand-off record or waitUntilFree() caller
-- exists: the lock key is gone. 0: anything else; nothing was written, and the caller
-- sends the release script, which knows what to do.
if redis.call('GET', lock) == ARGV[1] and redis.call('EXISTS', q, hd, fw) == 0 then
	redis.call('DEL', lock)
	return 1
end
return 0
