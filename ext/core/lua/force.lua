-- The force release script. KEYS[1] the lock key.
-- ARGV[1] "1" fair. Breaks the writer, every reader and a cooldown, withdraws
-- the hand-offs not yet picked up (their "y" would otherwise still read as a
-- hold), and hands the resource to the waiters; the fencing counter stays.
-- Returns how many holds went.

-- Runs as a function, which lib/wake_watchers.lua closes.
local function run()
--@include core.lua
--@include queue.lua
local now, n = now_ms(), 0
local v = redis.call('GET', lock)
if v and v ~= 'shared' then
	redis.call('DEL', lock .. ':w:' .. v)
	n = 1
end
for _, h in ipairs(redis.call('ZRANGE', hd, 0, -1)) do
	local w = lock .. ':w:' .. h
	local m = redis.call('LINDEX', w, -1)
	if m and string.sub(m, 1, 1) == 'y' then redis.call('DEL', w) end
end
n = n + live_readers(now)
redis.call('DEL', lock, hd, rd)
settle(ARGV[1])
return n
--@include wake_watchers.lua
