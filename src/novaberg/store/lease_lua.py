"""The Lua scripts of `Leases` (store/lease.py): release and extend only with the holder's token."""

from __future__ import annotations

# KEYS[1] = lease; ARGV[1] = token
RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""

# KEYS[1] = lease; ARGV[1] = token, ARGV[2] = ttl ms
EXTEND = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
"""
