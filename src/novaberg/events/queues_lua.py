"""The Lua scripts of `TurnQueues` (events/queues.py): each queue step is one atomic script.

Every key a script names is a key of one pair or of its user, so all of them share the
user's hash tag and one cluster slot (store/keys.py). The global set of active pairs and
the ready list live in another slot: `TurnQueues` updates them around the scripts."""

from __future__ import annotations

from novaberg.events.delivery_lua import DELIVER_LUA

# KEYS: prompt_queue, event_queue, marker
# 1 = ready, 0 = not ready, -1 = idle (nothing queued, no turn: may leave the active set)
READY = """
if redis.call('LLEN', KEYS[1]) == 0 then
  if redis.call('LLEN', KEYS[2]) == 0 and redis.call('EXISTS', KEYS[3]) == 0 then
    return -1
  end
  return 0
end
if redis.call('LLEN', KEYS[2]) > 0 or redis.call('EXISTS', KEYS[3]) == 1 then return 0 end
return 1
"""

# KEYS: prompt_queue, event_queue, marker, processing, carried, rounds
# ARGV: turn_id, marker_ttl, pair_member, window, max_block, user_id, character_id
# The block entry, false if the pair is busy, -1 if it is idle (as READY).
BEGIN_TURN = """
if redis.call('LLEN', KEYS[1]) == 0 then
  if redis.call('LLEN', KEYS[2]) == 0 and redis.call('EXISTS', KEYS[3]) == 0 then
    return -1
  end
  return false
end
if redis.call('LLEN', KEYS[2]) > 0 then return false end
if not redis.call('SET', KEYS[3], ARGV[1], 'NX', 'EX', tonumber(ARGV[2])) then return false end
local items = redis.call('LRANGE', KEYS[1], 0, tonumber(ARGV[5]) - 1)
local count = 1
local ok, first = pcall(cjson.decode, items[1])
local prev = ok and type(first) == 'table' and tonumber(first.empfangen_am) or nil
for i = 2, #items do
  if prev == nil then break end
  local ok2, item = pcall(cjson.decode, items[i])
  local t = ok2 and type(item) == 'table' and tonumber(item.empfangen_am) or nil
  if t == nil or t - prev > tonumber(ARGV[4]) then break end
  count = i
  prev = t
end
local block = {}
for i = 1, count do block[i] = items[i] end
redis.call('LTRIM', KEYS[1], count, -1)
local fields = {art = 'block', turn_id = ARGV[1], user_id = ARGV[6],
                character_id = ARGV[7], items = block}
local carried = redis.call('LRANGE', KEYS[5], 0, -1)
if #carried > 0 then fields.uebertragen = carried end
local rounds = tonumber(redis.call('GET', KEYS[6]))
if rounds then fields.runden = rounds end
redis.call('DEL', KEYS[5], KEYS[6])
local entry = cjson.encode(fields)
redis.call('LPUSH', KEYS[4], entry)
return entry
"""

# KEYS: prompt_queue, marker, processing, carried, pending_agent, seq, log, channel,
#       rounds
# ARGV: marker_value, entry, last_received_at, window, ttl, stage_body, keep, log_ttl,
#       marker_ttl, rounds, hold ('1': return {1, stage message} unpublished; '' publishes),
#       ids...
SUPERSEDE = (
    DELIVER_LUA
    + """
local hold = ARGV[11] == '1'
if not redis.call('LPOS', KEYS[3], ARGV[2]) then
  if hold then  -- a retry whose first attempt superseded: publish what it logged
    local m = logged(KEYS[7], ARGV[6])
    if not m then return {2} end
    redis.call('EXPIRE', KEYS[7], tonumber(ARGV[8]))  -- a write: WAIT covers the first run
    return {1, m}
  end
  return 2
end
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end
redis.call('EXPIRE', KEYS[2], tonumber(ARGV[9]))
if redis.call('EXISTS', KEYS[5]) == 1 then return 0 end
local first = redis.call('LINDEX', KEYS[1], 0)
if not first then return 0 end
local ok, item = pcall(cjson.decode, first)
local t = ok and type(item) == 'table' and tonumber(item.empfangen_am) or nil
if t == nil or t - tonumber(ARGV[3]) > tonumber(ARGV[4]) then return 0 end
if redis.call('LREM', KEYS[3], 1, ARGV[2]) == 0 then return 0 end
if #ARGV > 11 then
  redis.call('RPUSH', KEYS[4], unpack(ARGV, 12))
  redis.call('EXPIRE', KEYS[4], tonumber(ARGV[5]))
end
redis.call('SET', KEYS[9], ARGV[10], 'EX', tonumber(ARGV[5]))
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[5]))
redis.call('DEL', KEYS[2])
local _, msg = deliver(
  KEYS[6], KEYS[7], KEYS[8], ARGV[6], tonumber(ARGV[7]), tonumber(ARGV[8]), hold)
if hold then return {1, msg} end
return 1
"""
)

# KEYS: event_queue, processing, marker; ARGV: worker_id, marker_ttl, scan
CLAIM_EVENT = """
local marker = redis.call('GET', KEYS[3])
if marker and string.find(marker, '@', 1, true) then return false end
local items = redis.call('LRANGE', KEYS[1], 0, tonumber(ARGV[3]) - 1)
for i, raw in ipairs(items) do
  local tid = nil
  local ok, ev = pcall(cjson.decode, raw)
  if ok and type(ev) == 'table' and type(ev.payload) == 'table'
     and type(ev.payload.turn_id) == 'string' then
    tid = ev.payload.turn_id
  end
  if (not marker) or (tid ~= nil and marker == tid) then
    redis.call('LREM', KEYS[1], 1, raw)
    local owner = (tid or 'ungueltig') .. '@' .. ARGV[1]
    redis.call('SET', KEYS[3], owner, 'EX', tonumber(ARGV[2]))
    local entry = cjson.encode({art = 'event', raw = raw, marker = owner})
    redis.call('LPUSH', KEYS[2], entry)
    return entry
  end
end
return false
"""

# KEYS: marker; ARGV: value, ttl
REFRESH = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('EXPIRE', KEYS[1], tonumber(ARGV[2]))
end
return 0
"""

# KEYS: marker, processing, event_queue
# ARGV: marker_value ('' = leave marker), entry, event_json ('' = none), queue_ttl
# Acts only while the entry is in the list: run twice, the second call does nothing.
# (The caller puts the pair on the ready list afterwards: a run ended, what waited
# behind it may start now.)
FINISH = """
if redis.call('LREM', KEYS[2], 1, ARGV[2]) == 0 then return 0 end
if ARGV[1] ~= '' and redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
end
if ARGV[3] ~= '' then
  redis.call('RPUSH', KEYS[3], ARGV[3])
  redis.call('EXPIRE', KEYS[3], tonumber(ARGV[4]))
end
return 1
"""

# KEYS: marker, processing, event_queue
# ARGV: marker_value, entry, event_json, queue_ttl
# A claimed event that never ran goes back to the front of its queue, its marker freed.
HAND_BACK = """
if redis.call('LREM', KEYS[2], 1, ARGV[2]) == 0 then return 0 end
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
redis.call('LPUSH', KEYS[3], ARGV[3])
redis.call('EXPIRE', KEYS[3], tonumber(ARGV[4]))
return 1
"""
