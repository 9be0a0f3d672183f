-- A character belongs to the user who created it (`besitzer`); '' marks a built-in character
-- (e.g. nova) that every user may talk to and nobody may change. The key is the pair
-- (besitzer, character_id): two users may import the same card under the same id, and since
-- every Redis key and memory row is already per (user, character) pair, the two never meet.
-- Readers go through store/characters.py, which shows a user their own rows and the shared
-- ones only. Every statement here can run again without changing what it did.

ALTER TABLE characters ADD COLUMN IF NOT EXISTS besitzer TEXT NOT NULL DEFAULT '';

DO $$
BEGIN
    IF NOT EXISTS (
        SELECT 1 FROM pg_constraint
        WHERE conrelid = 'characters'::regclass AND conname = 'characters_besitzer_pkey'
    ) THEN
        ALTER TABLE characters DROP CONSTRAINT IF EXISTS characters_pkey;
        ALTER TABLE characters
            ADD CONSTRAINT characters_besitzer_pkey PRIMARY KEY (besitzer, character_id);
    END IF;
END $$;

-- Characters imported before ownership existed (a card's hash, no owner yet) go to the users
-- the stored data names, one row per user (the row is copied for each further user):
--   1. whoever holds the card's lorebook: long-term nodes with the provenance
--      `karte:{user}:{character}:{entry}` that only a card import writes;
--   2. else whoever talked with it: the conversation archive and the raw turns of the
--      pipeline log of that (user, character) pair.
-- A card character with no evidence at all stays shared: nobody can be named as its owner,
-- and hiding it would take it from whoever used it. A character created without a card
-- (built-in, or by an operator's script) stays shared too.
WITH ohne_besitzer AS (
    SELECT character_id FROM characters WHERE besitzer = '' AND karten_hash IS NOT NULL
),
lore AS (
    SELECT DISTINCT k.user_id, k.character_id
    FROM lzg_knoten k JOIN ohne_besitzer USING (character_id)
    WHERE starts_with(k.kzg_quell_key, 'karte:' || k.user_id || ':' || k.character_id || ':')
),
gespraech AS (
    SELECT a.user_id, a.character_id
    FROM gespraechsarchiv a JOIN ohne_besitzer USING (character_id)
    UNION
    SELECT p.user_id, p.character_id
    FROM pipeline_log p JOIN ohne_besitzer USING (character_id)
    WHERE p.art IN ('turn_roh', 'turn_gescheitert') AND p.user_id IS NOT NULL
),
belege AS (
    SELECT user_id, character_id FROM lore
    UNION
    SELECT g.user_id, g.character_id FROM gespraech g
    WHERE NOT EXISTS (SELECT 1 FROM lore l WHERE l.character_id = g.character_id)
),
kopiert AS (
    INSERT INTO characters (
        besitzer, character_id, name, beschreibung, system_prompt, erstellt_am,
        persoenlichkeit, szenario, erste_nachricht, beispiel_dialog, karte, karten_hash,
        avatar, avatar_typ
    )
    SELECT b.user_id, c.character_id, c.name, c.beschreibung, c.system_prompt, c.erstellt_am,
           c.persoenlichkeit, c.szenario, c.erste_nachricht, c.beispiel_dialog, c.karte,
           c.karten_hash, c.avatar, c.avatar_typ
    FROM belege b JOIN characters c ON c.character_id = b.character_id AND c.besitzer = ''
    WHERE b.user_id <> ''
    ON CONFLICT (besitzer, character_id) DO NOTHING
    RETURNING character_id
)
DELETE FROM characters c
WHERE c.besitzer = '' AND c.karten_hash IS NOT NULL
  AND c.character_id IN (SELECT character_id FROM kopiert);
