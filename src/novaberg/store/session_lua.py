"""The Lua scripts of the session store (store/session.py): completing a stored turn by
compare and set, so a concurrent append or summary trim is never overwritten."""

from __future__ import annotations

from typing import Final

FIND: Final = """
local len = redis.call('LLEN', KEYS[1])
local function scan(first)
  local out = {}
  local items = redis.call('LRANGE', KEYS[1], first, -1)
  for i = #items, 1, -1 do
    if string.find(items[i], ARGV[1], 1, true) then
      out[#out + 1] = first + i - 1
      out[#out + 1] = items[i]
    end
  end
  return out
end
local first = math.max(0, len - tonumber(ARGV[2]))
local found = scan(first)
if #found == 0 and first > 0 then found = scan(0) end
table.insert(found, 1, len)
return found
"""
"""KEYS[1]=turns; ARGV[1]=turn id, ARGV[2]=window → {length, index, item, index, item, …}
of the items whose text holds the turn id, newest first: in the newest `window` items, or
in the whole list when those hold none."""

SWAP: Final = """
if redis.call('LINDEX', KEYS[1], ARGV[1]) ~= ARGV[2] then return -1 end
redis.call('LSET', KEYS[1], ARGV[1], ARGV[3])
return redis.call('LLEN', KEYS[1])
"""
"""KEYS[1]=turns; ARGV[1]=index, ARGV[2]=the item read there, ARGV[3]=its replacement →
the list length after the write, or -1 when the item there is not the one read any more
(a summary trim moved it): compare and set, so no concurrent write is overwritten."""

SET_STORED: Final = """
local len = redis.call('LLEN', KEYS[1])
local function swap(first)
  local items = redis.call('LRANGE', KEYS[1], first, -1)
  for i = #items, 1, -1 do
    if items[i] == ARGV[1] then
      redis.call('LSET', KEYS[1], first + i - 1, ARGV[2])
      return len
    end
  end
  return -1
end
local first = math.max(0, len - tonumber(ARGV[3]))
local done = swap(first)
if done < 0 and first > 0 then done = swap(0) end
return done
"""
"""KEYS[1]=turns; ARGV[1]=the item as stored, ARGV[2]=its replacement, ARGV[3]=window →
the list length after replacing the newest item equal to ARGV[1] (in the newest `window`
items, or in the whole list when those hold none), or -1 when no item is: compare and
set, wherever a trim moved it."""
