"""The Lua scripts `ShortTermStore` runs (store/short_term.py): one round trip per usual path.

Each comment names the script's keys and arguments and what it returns. Field names are the
stored entry hash's (docs/behaviour/memory.md#short-term-memory).
"""

from __future__ import annotations

# match_and_read(index, version, entry to skip, wanted tokens ",theme,", names): every
# other live entry whose themen_norm contains a wanted token and that has a numeric
# salienz_eingang gets haeufigkeit + 1 -> theme row {key, salienz_eingang, themen_norm,
# haeufigkeit}. Entries without themen_norm (written before it existed) come back unchanged
# as {key, salienz_eingang, themen} for the caller to match. Gone members (no user_id) are
# dropped from the index. In the same pass (one HMGET an entry) the flat field rows of the
# live entries holding one of `names`, with the values after the matching (a matched
# entry's haeufigkeit is the incremented one), as field_rows would read them afterwards.
# Returns {gone keys, theme rows, field rows}.
MATCH_FUNCTION = """
local function match_and_read(index, version, skip, tokens, names)
  local rows, gone, out = {}, {}, {}
  local wanted = {'user_id', 'themen_norm', 'salienz_eingang', 'themen'}
  local count_at = nil
  for i, name in ipairs(names) do
    wanted[4 + i] = name
    if name == 'haeufigkeit' then count_at = 4 + i end
  end
  for _, k in ipairs(redis.call('SMEMBERS', index)) do
    local r = redis.call('HMGET', k, unpack(wanted))
    if not r[1] then
      gone[#gone + 1] = k
    else
      if k ~= skip and r[3] then
        if r[2] then
          if tonumber(r[3]) then
            for _, token in ipairs(tokens) do
              if string.find(r[2], token, 1, true) then
                local count = redis.call('HINCRBY', k, 'haeufigkeit', 1)
                rows[#rows + 1] = {k, r[3], r[2], count}
                if count_at then r[count_at] = tostring(count) end
                break
              end
            end
          end
        elseif r[4] and r[4] ~= '' then
          rows[#rows + 1] = {k, r[3], r[4]}
        end
      end
      local any = false
      for i = 5, 4 + #names do
        if r[i] then any = true end
      end
      if any then
        out[#out + 1] = k
        for i = 5, 4 + #names do out[#out + 1] = r[i] end
      end
    end
  end
  if #gone > 0 then
    redis.call('SREM', index, unpack(gone))
    redis.call('INCR', version)
  end
  return {gone, rows, out}
end

-- match_themes: match_and_read without field rows -> {gone keys, theme rows}
local function match_themes(index, version, skip, tokens)
  local found = match_and_read(index, version, skip, tokens, {})
  return {found[1], found[2]}
end
"""

# KEYS[1]=index, KEYS[2]=version, KEYS[3]=entry to skip; ARGV=wanted tokens.
MATCH_THEMES = MATCH_FUNCTION + "return match_themes(KEYS[1], KEYS[2], KEYS[3], ARGV)\n"

# field_rows(index, names): flat {key, value per name, key, ...} of the pair's entries
# holding at least one of the named fields (a missing field is nil).
FIELD_ROWS_FUNCTION = """
local function field_rows(index, names)
  local out = {}
  for _, k in ipairs(redis.call('SMEMBERS', index)) do
    local values = redis.call('HMGET', k, unpack(names))
    local any = false
    for _, v in ipairs(values) do
      if v then any = true end
    end
    if any then
      out[#out + 1] = k
      for i = 1, #names do out[#out + 1] = values[i] end
    end
  end
  return out
end
"""

# KEYS[1]=index; ARGV=field names -> field_rows
FIELD_ROWS = FIELD_ROWS_FUNCTION + "return field_rows(KEYS[1], ARGV)\n"

# KEYS[1]=entry, KEYS[2]=index, KEYS[3]=version, KEYS[4]=optional flag set to "1";
# ARGV[1]=ttl_ms, ARGV[2]=index_ttl_s, ARGV[3]=n wanted tokens (-1: no matching),
# ARGV[4]=m field names (0: no rows), ARGV[5..4+n]=tokens, the next m ARGV=field names,
# then field, value. Returns {0} if the key exists, else {the index's new version (≥ 1),
# match_themes' gone keys, its rows (both empty when n < 0), field_rows of the m names
# after the matching (empty when m = 0)}: the entity magnets' read rides along, in the
# matching's pass over the entries (match_and_read).
CREATE = (
    MATCH_FUNCTION
    + FIELD_ROWS_FUNCTION
    + """
if redis.call('EXISTS', KEYS[1]) == 1 then return {0} end
local n = tonumber(ARGV[3])
local m = tonumber(ARGV[4])
local names_at = 5 + math.max(n, 0)
redis.call('HSET', KEYS[1], unpack(ARGV, names_at + m))
redis.call('PEXPIRE', KEYS[1], ARGV[1])
redis.call('SADD', KEYS[2], KEYS[1])
local version = redis.call('INCR', KEYS[3])
if redis.call('TTL', KEYS[2]) < tonumber(ARGV[2]) then
  redis.call('EXPIRE', KEYS[2], ARGV[2])
  redis.call('EXPIRE', KEYS[3], ARGV[2])
end
if KEYS[4] then redis.call('SET', KEYS[4], '1') end
local tokens = {unpack(ARGV, 5, 4 + n)}
local names = {unpack(ARGV, names_at, names_at + m - 1)}
local found = {{}, {}, {}}
if n >= 0 then
  found = match_and_read(KEYS[2], KEYS[3], KEYS[1], tokens, names)
elseif m > 0 then
  found[3] = field_rows(KEYS[2], names)
end
return {version, found[1], found[2], found[3]}
"""
)

# KEYS[1]=index, KEYS[2]=version, KEYS[3..]=keys to drop
FORGET = """
local n = redis.call('SREM', KEYS[1], unpack(KEYS, 3))
if n > 0 then redis.call('INCR', KEYS[2]) end
return n
"""

# KEYS[1]=index, KEYS[2]=version, KEYS[3]=entry -> 1 if the pair's entry was removed, else 0
FORGET_ONE = """
if redis.call('SISMEMBER', KEYS[1], KEYS[3]) == 0 then return 0 end
redis.call('DEL', KEYS[3])
redis.call('SREM', KEYS[1], KEYS[3])
redis.call('INCR', KEYS[2])
return 1
"""

# KEYS[1]=index, KEYS[2]=version, KEYS[3]=re-embedding counter -> {version, members joined
# by newline, counter} (one bulk reply: the pure-Python RESP parser is slow on thousands of
# small replies)
MEMBERS = """
return {redis.call('GET', KEYS[2]) or '0', table.concat(redis.call('SMEMBERS', KEYS[1]), '\\n'),
        redis.call('GET', KEYS[3]) or '0'}
"""

# KEYS[1]=index, KEYS[2]=version, KEYS[3]=re-embedding counter, KEYS[4]=entry;
# ARGV[1]=index ttl s, ARGV[2..]=field/value pairs -> 1 if the pair's live entry was updated,
# else 0. The entry keeps its key and TTL; both counters move so every cache refetches.
CORRECT = """
if redis.call('SISMEMBER', KEYS[1], KEYS[4]) == 0 then return 0 end
if redis.call('EXISTS', KEYS[4]) == 0 then return 0 end
redis.call('HSET', KEYS[4], unpack(ARGV, 2))
redis.call('INCR', KEYS[2])
redis.call('INCR', KEYS[3])
redis.call('EXPIRE', KEYS[3], tonumber(ARGV[1]))
return 1
"""

# KEYS=entry keys; ARGV[1]=expected byte length ->
# {concatenated vectors of the good keys, cjson [missing indices], cjson [other-size indices]}
VECTORS = """
local parts, missing, other = {}, {}, {}
local size = tonumber(ARGV[1])
for i, k in ipairs(KEYS) do
  local v = redis.call('HGET', k, 'embedding')
  if not v then
    missing[#missing + 1] = i
  elseif #v ~= size then
    other[#other + 1] = i
  else
    parts[#parts + 1] = v
  end
end
return {table.concat(parts), cjson.encode(missing), cjson.encode(other)}
"""

# KEYS[1]=index, KEYS[2]=version, KEYS[3]=re-embedding counter; ARGV[1]=expected byte length
# -> {version, good keys joined by newline, their concatenated vectors, cjson [missing keys],
# cjson [other-size keys], counter}
PAIR_VECTORS = """
local parts, good, missing, other = {}, {}, {}, {}
local size = tonumber(ARGV[1])
for _, k in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local v = redis.call('HGET', k, 'embedding')
  if not v then
    missing[#missing + 1] = k
  elseif #v ~= size then
    other[#other + 1] = k
  else
    parts[#parts + 1] = v
    good[#good + 1] = k
  end
end
return {redis.call('GET', KEYS[2]) or '0', table.concat(good, '\\n'), table.concat(parts),
        cjson.encode(missing), cjson.encode(other), redis.call('GET', KEYS[3]) or '0'}
"""

# KEYS[1]=version, KEYS[2..]=entries -> {version, then per entry its flat field/value list
# without the embedding (nil when the entry is gone)}. Version and hashes are read together,
# so a search whose cached matrix is still current needs this one call only.
HITS = """
local out = {redis.call('GET', KEYS[1]) or '0'}
for i = 2, #KEYS do
  local flat = redis.call('HGETALL', KEYS[i])
  local kept = false
  if #flat > 0 then
    kept = {}
    for j = 1, #flat, 2 do
      if flat[j] ~= 'embedding' then
        kept[#kept + 1] = flat[j]
        kept[#kept + 1] = flat[j + 1]
      end
    end
  end
  out[i] = kept
end
return out
"""

# KEYS[1]=index, KEYS[2..]=entries; ARGV[1]=index_ttl_s, then per entry salienz, tier ttl_ms.
# Per entry the remaining TTL in ms after the update (raised to the tier, never shortened),
# or -2 when the entry is gone. One script call for all neighbours of a new entry.
RESALIENCE = """
local out = {}
for i = 2, #KEYS do
  local key = KEYS[i]
  local tier = tonumber(ARGV[2 * i - 1])
  if redis.call('EXISTS', key) == 0 then
    out[#out + 1] = -2
  else
    redis.call('HSET', key, 'salienz', ARGV[2 * i - 2])
    local left = redis.call('PTTL', key)
    if left >= 0 and left < tier then
      redis.call('PEXPIRE', key, tier)
      left = tier
    end
    out[#out + 1] = left
  end
end
if redis.call('TTL', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('EXPIRE', KEYS[1], ARGV[1])
end
return out
"""

# KEYS=entries; per entry the new haeufigkeit, or -1 when the entry is gone.
INCREMENT = """
local out = {}
for i, key in ipairs(KEYS) do
  if redis.call('EXISTS', key) == 0 then
    out[i] = -1
  else
    out[i] = redis.call('HINCRBY', key, 'haeufigkeit', 1)
  end
end
return out
"""

# KEYS[1]=entry; ARGV[1]=epoch. 1 = marked now, 0 = already marked, -1 = entry gone.
MARK_PROMOTION = """
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
return redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2])
"""

# KEYS[1]=entry, KEYS[2]=queue list (one slot: the user's); ARGV[1]=field,
# ARGV[2]=epoch, ARGV[3]=job. MARK_PROMOTION plus, when newly marked, the push.
QUEUE_PROMOTION = """
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 0 then return 0 end
redis.call('RPUSH', KEYS[2], ARGV[3])
return 1
"""
