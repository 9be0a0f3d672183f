"""The Lua scripts of `ParkedEvents` (events/parked.py): each step on held events is one
atomic script, so an event is always in exactly one durable place."""

from __future__ import annotations

# KEYS: processing, marker, parked, paused_pairs
# ARGV: entry, marker_value ('' = none), event_json, parked_ttl, pair_member
# Acts only while the entry is in the processing list: run twice, the second does nothing.
PARK = """
if redis.call('LREM', KEYS[1], 1, ARGV[1]) == 0 then return 0 end
if ARGV[2] ~= '' and redis.call('GET', KEYS[2]) == ARGV[2] then redis.call('DEL', KEYS[2]) end
redis.call('RPUSH', KEYS[3], ARGV[3])
redis.call('EXPIRE', KEYS[3], tonumber(ARGV[4]))
redis.call('SADD', KEYS[4], ARGV[5])
return 1
"""

# KEYS: parked, event_queue, active_pairs, paused_pairs, tail keys to drop...
# ARGV: n, the n parked events as read, queue_ttl, pair_member, events to queue...
# Compare-and-set: only if the parked list is still exactly what was read (else -1, the
# caller reads again). Queues the events in order at the front of the event queue.
TAKE_UP = """
local n = tonumber(ARGV[1])
local current = redis.call('LRANGE', KEYS[1], 0, -1)
if #current ~= n then return -1 end
for i = 1, n do
  if current[i] ~= ARGV[1 + i] then return -1 end
end
local member = ARGV[n + 3]
redis.call('DEL', KEYS[1])
redis.call('SREM', KEYS[4], member)
local count = #ARGV - (n + 3)
if count > 0 then
  for i = #ARGV, n + 4, -1 do redis.call('LPUSH', KEYS[2], ARGV[i]) end
  redis.call('EXPIRE', KEYS[2], tonumber(ARGV[n + 2]))
  redis.call('SADD', KEYS[3], member)
end
for i = 5, #KEYS do redis.call('DEL', KEYS[i]) end
return count
"""

# KEYS: parked, processing, paused_pairs; ARGV: event_json, entry, pair_member
# Moves one held event into the processing list, where it is ended like any run.
UNPARK_ONE = """
if redis.call('LREM', KEYS[1], 1, ARGV[1]) == 0 then return 0 end
redis.call('LPUSH', KEYS[2], ARGV[2])
if redis.call('LLEN', KEYS[1]) == 0 then redis.call('SREM', KEYS[3], ARGV[3]) end
return 1
"""
