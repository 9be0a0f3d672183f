"""The Lua of delivery (events/delivery.py): number, log and publish a message atomically.

On a Redis Cluster the scripts number and log but hold the publication back (`hold`): the
caller first waits until a replica has the write, then publishes the message the script
returns (events/held_delivery.py, docs/behaviour/events.md "Outcomes in a Redis Cluster")."""

from __future__ import annotations

DELIVER_LUA = """
local function deliver(seq_key, log_key, channel, body, keep, ttl, hold)
  local seq = redis.call('INCR', seq_key)
  local msg = '{"seq":' .. seq .. ',' .. string.sub(body, 2)
  redis.call('ZADD', log_key, seq, msg)
  redis.call('ZREMRANGEBYRANK', log_key, 0, -(keep + 1))
  redis.call('EXPIRE', log_key, ttl)
  if not hold then redis.call('PUBLISH', channel, msg) end
  return seq, msg
end
local function logged(log_key, body)
  local tail = string.sub(body, 2)
  for _, m in ipairs(redis.call('ZREVRANGE', log_key, 0, 49)) do
    if string.sub(m, -#tail) == tail then return m end
  end
  return false
end
"""
"""Lua: number, log and (unless `hold`) publish one message; returns seq and the numbered
message. Shared by `SEND` and scripts that must deliver in the same atomic step as a queue
change (events/queues.py, supersede). `logged`: the message a body became, if a call before
this one logged it (a retry after a lost reply, with the same body; looked for among the
user's last 50, the body carries its own send time, so no other message matches)."""

# KEYS: seq, log, channel, outcome, the user's channel outbox
# ARGV: body (JSON object without seq, starts with '{'), keep, ttl, outcome_ttl, user_id,
#       '1' = claim the outcome key, '1' = push to the outbox,
#       '1' = hold: do not publish, return {seq, message} (absent on a single Redis)
# Every key is in the user's slot (store/keys.py, hash tags). An absent outcome or outbox is
# a flag, not an empty key: '' hashes to slot 0, which a cluster refuses as cross-slot.
SEND = (
    DELIVER_LUA
    + """
local hold = ARGV[8] == '1'
if ARGV[6] == '1' then
  if not redis.call('SET', KEYS[4], '1', 'NX', 'EX', tonumber(ARGV[4])) then
    if hold then  -- publish what the log holds for this outcome (a retry, see below)
      local claimed = tonumber(redis.call('GET', KEYS[4]))
      local found = claimed and redis.call('ZRANGEBYSCORE', KEYS[2], claimed, claimed)[1]
      if not found then return {0} end
      -- a write, so that the caller's WAIT also covers the earlier attempt's writes
      redis.call('SET', KEYS[4], claimed, 'XX', 'KEEPTTL')
      return {0, found}
    end
    return 0
  end
end
local seq, msg = deliver(
  KEYS[1], KEYS[2], KEYS[3], ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), hold)
if ARGV[7] == '1' then
  redis.call('RPUSH', KEYS[5], cjson.encode({user_id = ARGV[5], seq = seq}))
end
if hold then
  if ARGV[6] == '1' then redis.call('SET', KEYS[4], seq, 'XX', 'KEEPTTL') end
  return {seq, msg}
end
return seq
"""
)
"""Numbers, logs and publishes a message; an outcome (`outcome` key given) of a user with a
linked channel also enters the user's channel outbox in the same step, so an outcome that
reached the log is never missing from the way to the channels (reach/outbox.py). Held
(cluster): `{seq, message}`, and the outcome key holds the seq; an outcome already claimed
gives `{0, message}` with the message the log holds for it (a retry after a lost reply
publishes it; a socket that had it drops it by seq), else `{0}`."""
