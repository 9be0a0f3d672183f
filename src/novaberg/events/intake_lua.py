"""The Lua script of the intake (events/intake.py): store a batch of utterances in one call."""

from __future__ import annotations

from novaberg.events.resp import LuaScript

# KEYS[1] = active pairs; KEYS[2] = ready pairs; KEYS[3..] = prompt queues
# ARGV = ttl, then per queue: count, entries..., pair member
ENQUEUE = LuaScript("""
local ttl = tonumber(ARGV[1])
local at = 2
for k = 3, #KEYS do
  local count = tonumber(ARGV[at])
  redis.call('RPUSH', KEYS[k], unpack(ARGV, at + 1, at + count))
  redis.call('EXPIRE', KEYS[k], ttl)
  redis.call('SADD', KEYS[1], ARGV[at + count + 1])
  redis.call('RPUSH', KEYS[2], ARGV[at + count + 1])
  at = at + count + 2
end
return 1
""")
