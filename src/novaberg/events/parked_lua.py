"""The Lua scripts of `ParkedEvents` (events/parked.py): each step on held events is one
atomic script, so an event is always in exactly one durable place."""

from __future__ import annotations

# KEYS: processing, marker, parked
# ARGV: entry, marker_value ('' = none), event_json, parked_ttl
# Acts only while the entry is in the processing list: run twice, the second does nothing.
# (The pair joins the global set of paused pairs before, outside the script: other slot.)
PARK = """
if redis.call('LREM', KEYS[1], 1, ARGV[1]) == 0 then return 0 end
if ARGV[2] ~= '' and redis.call('GET', KEYS[2]) == ARGV[2] then redis.call('DEL', KEYS[2]) end
redis.call('RPUSH', KEYS[3], ARGV[3])
redis.call('EXPIRE', KEYS[3], tonumber(ARGV[4]))
return 1
"""

# KEYS: parked, event_queue
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
redis.call('DEL', KEYS[1])
local count = #ARGV - (n + 3)
if count > 0 then
  for i = #ARGV, n + 4, -1 do redis.call('LPUSH', KEYS[2], ARGV[i]) end
  redis.call('EXPIRE', KEYS[2], tonumber(ARGV[n + 2]))
end
return count
"""

# KEYS: parked, processing; ARGV: event_json, entry
# Moves one held event into the processing list, where it is ended like any run.
UNPARK_ONE = """
if redis.call('LREM', KEYS[1], 1, ARGV[1]) == 0 then return 0 end
redis.call('LPUSH', KEYS[2], ARGV[2])
return 1
"""
