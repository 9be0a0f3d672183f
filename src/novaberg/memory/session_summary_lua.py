"""The Lua script of the session summary (memory/session_summary.py): trim only an unchanged head."""

from __future__ import annotations

# KEYS[1]=turns, KEYS[2]=summary; ARGV[1]=n, ARGV[2]=summary text, ARGV[3]=ttl,
# ARGV[4..]=the n oldest items as read. 1 = trimmed, 0 = the head changed meanwhile.
TRIM_IF_UNCHANGED = """
local n = tonumber(ARGV[1])
local head = redis.call('LRANGE', KEYS[1], 0, n - 1)
if #head ~= n then return 0 end
for i = 1, n do
  if head[i] ~= ARGV[3 + i] then return 0 end
end
redis.call('LTRIM', KEYS[1], n, -1)
redis.call('SET', KEYS[2], ARGV[2], 'EX', tonumber(ARGV[3]))
return 1
"""
