--@keys lock rd q qd hd ws pk fk tk mb wl fw fl +w
-- The force release script. KEYS as the release script's, and the wake
-- lists of every hand-off on record (it answers "need" until it has them).
-- ARGV[1] "1" fair. Breaks the writer, every reader and a cooldown,
-- withdraws the hand-offs not yet picked up (their "y" would otherwise
-- still read as a hold), and hands the resource to the waiters; the
-- fencing counter stays. Its result (see lib/end.lua) is how many holds went.

local H, hints, watchers = {'0', '0'}, {}, true
-- Runs as a function, which lib/end.lua closes.
local function run()
--@include core.lua
--@include queue.lua
local now, n = now_ms(), 0
local need = needs(now, true)
if need then return need end
local v = redis.call('GET', lock)
if v and v ~= '' then n = 1 end
-- A writer with a "y" unread has a record here: its hold lasts as long.
for _, h in ipairs(redis.call('ZRANGE', hd, 0, -1)) do
	local t, s = record(h)
	local w = s == 'd' and wk(t)
	if w then
		local m = redis.call('LINDEX', w, -1)
		if m and string.sub(m, 1, 1) == 'y' then redis.call('DEL', w) end
	end
end
n = n + live_readers(now)
redis.call('DEL', lock, hd, mb, rd)
settle(ARGV[1])
return n
--@include end.lua
