"""The Lua scripts of the intake (events/intake.py): store a batch of utterances.

The prompt queues of one user share a hash slot; the set of active pairs and the ready
list share another (`{bereit}`). So a write is three calls in order — activate, enqueue
(one call per user), wake — each in one slot, legal in a Redis Cluster too."""

from __future__ import annotations

from novaberg.events.resp import LuaScript

# KEYS = prompt queues, all of one user (one slot); ARGV = ttl, then per queue: count,
# entries...
ENQUEUE = LuaScript("""
local ttl = tonumber(ARGV[1])
local at = 2
for k = 1, #KEYS do
  local count = tonumber(ARGV[at])
  redis.call('RPUSH', KEYS[k], unpack(ARGV, at + 1, at + count))
  redis.call('EXPIRE', KEYS[k], ttl)
  at = at + count + 1
end
return 1
""")

# KEYS[1] = the set of active pairs; ARGV = pair members. Before ENQUEUE: the pairs are
# active before their utterances exist (readers re-check an extra member).
ACTIVATE = LuaScript("""
return redis.call('SADD', KEYS[1], unpack(ARGV))
""")

# KEYS[1] = the ready list; ARGV = pair members. After ENQUEUE: the hint comes after the
# work it points to (the workers' 30 s sweep covers a crash in between).
WAKE = LuaScript("""
return redis.call('RPUSH', KEYS[1], unpack(ARGV))
""")
