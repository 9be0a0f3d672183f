"""The Lua script of the promotion job (memory/jobs/promotion.py)."""

from __future__ import annotations

# KEYS[1]=queue, KEYS[2]=arbeit, KEYS[3]=user set; ARGV[1]=user
FORGET_USER = """
if redis.call('LLEN', KEYS[1]) == 0 and redis.call('LLEN', KEYS[2]) == 0 then
  redis.call('SREM', KEYS[3], ARGV[1])
  return 1
end
return 0
"""
