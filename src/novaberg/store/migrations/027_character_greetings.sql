-- A card's alternate greetings (character card V2/V3 `alternate_greetings`), beside its
-- first greeting (`erste_nachricht`): the page lets the person browse them on an empty
-- conversation (docs/behaviour/web.md#the-page). A JSON array of strings; cards
-- imported before this column existed get theirs from the stored card.
ALTER TABLE characters ADD COLUMN IF NOT EXISTS weitere_begruessungen JSONB NOT NULL
    DEFAULT '[]'::jsonb;
UPDATE characters
   SET weitere_begruessungen = coalesce((
        SELECT jsonb_agg(g) FROM jsonb_array_elements(karte -> 'data' -> 'alternate_greetings') g
         WHERE jsonb_typeof(g) = 'string' AND btrim(g #>> '{}') <> ''), '[]'::jsonb)
 WHERE karte IS NOT NULL
   AND jsonb_typeof(karte -> 'data' -> 'alternate_greetings') = 'array'
   AND weitere_begruessungen = '[]'::jsonb;
