"""The Lua script of the model gate (llm/gate.py): take a slot in one atomic step."""

from __future__ import annotations

# KEYS[1]=slot set, KEYS[2]=user-waiting flag; ARGV: token, slots, lease_ms, is_background
ACQUIRE = """
local now_parts = redis.call('TIME')
local now = tonumber(now_parts[1]) * 1000 + math.floor(tonumber(now_parts[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if ARGV[4] == '1' and redis.call('EXISTS', KEYS[2]) == 1 then
  return 0
end
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[2]) then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[1])
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]) * 2)
  return 1
end
return 0
"""
