"""The Lua of delivery (events/delivery.py): number, log and publish a message atomically."""

from __future__ import annotations

DELIVER_LUA = """
local function deliver(seq_key, log_key, channel, body, keep, ttl)
  local seq = redis.call('INCR', seq_key)
  local msg = '{"seq":' .. seq .. ',' .. string.sub(body, 2)
  redis.call('ZADD', log_key, seq, msg)
  redis.call('ZREMRANGEBYRANK', log_key, 0, -(keep + 1))
  redis.call('EXPIRE', log_key, ttl)
  redis.call('PUBLISH', channel, msg)
  return seq
end
"""
"""Lua: number, log and publish one message. Shared by `SEND` and scripts that must
deliver in the same atomic step as a queue change (events/queues.py, supersede)."""

# KEYS: seq, log, channel, outcome ('' = none)
# ARGV: body (JSON object without seq, starts with '{'), keep, ttl, outcome_ttl
SEND = (
    DELIVER_LUA
    + """
if KEYS[4] ~= '' then
  if not redis.call('SET', KEYS[4], '1', 'NX', 'EX', tonumber(ARGV[4])) then
    return 0
  end
end
return deliver(KEYS[1], KEYS[2], KEYS[3], ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]))
"""
)
