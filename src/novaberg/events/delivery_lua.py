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

# KEYS: seq, log, channel, outcome, the user's channel outbox
# ARGV: body (JSON object without seq, starts with '{'), keep, ttl, outcome_ttl, user_id,
#       '1' = claim the outcome key, '1' = push to the outbox
# Every key is in the user's slot (store/keys.py, hash tags). An absent outcome or outbox is
# a flag, not an empty key: '' hashes to slot 0, which a cluster refuses as cross-slot.
SEND = (
    DELIVER_LUA
    + """
if ARGV[6] == '1' then
  if not redis.call('SET', KEYS[4], '1', 'NX', 'EX', tonumber(ARGV[4])) then
    return 0
  end
end
local seq = deliver(KEYS[1], KEYS[2], KEYS[3], ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]))
if ARGV[7] == '1' then
  redis.call('RPUSH', KEYS[5], cjson.encode({user_id = ARGV[5], seq = seq}))
end
return seq
"""
)
"""Numbers, logs and publishes a message; an outcome (`outcome` key given) of a user with a
linked channel also enters the user's channel outbox in the same step, so an outcome that
reached the log is never missing from the way to the channels (reach/outbox.py)."""
