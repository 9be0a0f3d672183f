"""Full-text search in PostgreSQL: the text-search configuration of a text, and the weighted
lexemes of a query.

Every stored text is indexed with the configuration of its language (`german` stems German,
`english` English; `simple` only lowercases — the fallback when the language is unclear).
A query does not know which language the remembered text was in, so its words are reduced
by all three configurations and the union is searched: "Hunde" finds a German row indexed
as `hund`, "dogs" an English row indexed as `dog`, a name like "Korbinian" every row.

The weight of a lexeme is its BM25 inverse document frequency in the pair's archive
(`archiv_lexeme`, `archiv_paar`, kept by triggers: migration 006): a word said once
outweighs one said every day. The same weights rank the short- and long-term layers (their
texts come from the same conversation): docs/behaviour/memory.md#hybrid-search.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final

from psycopg import AsyncConnection

from novaberg.pair import Pair
from novaberg.store.pipelined import Reply, Rows, local_settings, pipeline
from novaberg.store.query_forms import question_words

CONFIG_GERMAN: Final = "german"
CONFIG_ENGLISH: Final = "english"
CONFIG_SIMPLE: Final = "simple"
"""The text-search configurations a stored text may get (PostgreSQL's built-in names)."""

BM25_K1: Final = 1.2
BM25_B: Final = 0.75
"""BM25's usual saturation and length normalisation (Robertson & Zaragoza 2009)."""

FREQUENT_SHARE: Final = 0.02
FREQUENT_MIN_DF: Final = 200
"""A lexeme in more than 2 % of the pair's turns (and at least 200 of them) does not select
candidates — it still counts in their score. Without this, "heute" would make the lexical
list rank thousands of rows at 100 000 turns (latency), while its weight is near zero anyway."""

KEEP_RAREST: Final = 2
"""When every lexeme of a query is frequent, the rarest two still select candidates."""

TRIGRAM_MIN_CHARS: Final = 4
"""Only words at least this long are looked up by trigram similarity (a typo in a name)."""

TRIGRAM_THRESHOLD: Final = 0.35
TRIGRAM_PER_WORD: Final = 3
"""A misspelt word is corrected to at most 3 lexemes of the pair's vocabulary with pg_trgm
similarity ≥ 0.35 (two letters swapped in a name of 9 letters score about 0.43)."""


_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)

# Frequent function words of each language, used only to tell the languages apart (the
# configurations' own stopword lists decide what is indexed). Words common to both
# ("in", "so", "was", "also", "war", "hat", "man", "will") are left out.


def _word_set(text: str) -> frozenset[str]:
    return frozenset(text.split())


_GERMAN: Final = _word_set(
    "der die das den dem des und ist sind nicht ich du er sie es wir ihr mit auf für fur "
    "von zu ein eine einen einem einer im bin bist hast habe haben hatte auch noch schon "
    "aber oder wenn dass weil wie wer wo warum mein meine meinen meinem meiner dein deine "
    "sein seine ihre unser heute gestern morgen sehr mal doch ja nein nach bei aus über "
    "unter vom zum zur nur dann jetzt hier kann könnte wird wurde mich mir dich dir uns "
    "euch ganz gerne gern etwas nichts immer wieder keine kein heißt bitte danke"
)
_ENGLISH: Final = _word_set(
    "the a an and is are were be been has had have i you he she it we they my your his "
    "her our their this that these those with on for of to at by from not no yes do does "
    "did what who where when why how can could would should about just very really today "
    "yesterday tomorrow me him them us am been there here some any all more much called "
    "name named please thanks because if or but"
)
_GERMAN_LETTERS = re.compile(r"[äöüß]", re.IGNORECASE)
_FUNCTION_WORDS: Final = _GERMAN | _ENGLISH | _word_set("in so was war also hat man will")
"""Function words of either language, with those common to both (`query_forms`: a question
whose other words are all scaffolding keeps them)."""


_QUESTION_WORDS: Final = _word_set(
    "wann welche welcher welches welchen welchem wohin woher wieso weshalb weswegen wozu "
    "womit wofür wovon worüber worauf wovor wieviel wieviele "
    "which whose whom whatever"
)
"""Interrogatives the function-word lists above lack: opening a question they are
capitalised, and are no name and no noun ("Wann" would be the head of "irgendwann")."""


def name_like(text: str) -> set[str]:
    """The words of a query a trigram lookup is meant for, lowercased: capitalised words
    (names; in German also nouns: the compound lookup's nouns) except function words and
    interrogatives opening a sentence ("Was", "Wann", "Which"), or the one word of a
    one-word query. A lowercase word the archive never saw ("thing") would only find the
    words that contain it ("nothing")."""
    words = _WORD.findall(text)
    if len(words) == 1:
        return {words[0].lower()}
    return {
        w.lower()
        for w in words
        if w[:1].isupper()
        and w.lower() not in _GERMAN
        and w.lower() not in _ENGLISH
        and w.lower() not in _QUESTION_WORDS
    }


GENITIVE_MIN_CHARS: Final = 4


def speaker_keys(names: set[str]) -> list[str]:
    """The keys a speaker may be asked by: each name-like word, and a German genitive's name
    without its "s" ("Lenas Meinung", "Toms Auto" → "lena", "tom"; words of at least 4
    letters). A speaker's key is a first name (`SPEAKER_KEY_SQL`), so only an actual
    speaker's name matches: "Klaus" → "klau" finds nobody."""
    keys = set(names)
    keys |= {name[:-1] for name in names if name.endswith("s") and len(name) >= GENITIVE_MIN_CHARS}
    return sorted(keys)


def text_config(text: str) -> str:
    """The configuration to index `text` with: the language whose function words it uses
    more (German-only letters count for German); `simple` when neither shows."""
    words = [w.lower() for w in _WORD.findall(text)]
    german = sum(w in _GERMAN for w in words) + len(_GERMAN_LETTERS.findall(text)) // 2
    english = sum(w in _ENGLISH for w in words)
    if german == 0 and english == 0:
        return CONFIG_SIMPLE
    return CONFIG_GERMAN if german >= english else CONFIG_ENGLISH


def text_configs(texts: Sequence[str]) -> list[str]:
    """Each text's configuration (`text_config`) within one conversation: a text too short
    to tell ("Zwei Katzen.", "Sweet peas." → `simple`) takes the configuration most of the
    others have — a conversation keeps its language, and "Katze" then finds "Katzen"."""
    own = [text_config(text) for text in texts]
    told = Counter(config for config in own if config != CONFIG_SIMPLE)
    if not told:
        return own
    common = told.most_common(1)[0][0]
    return [common if config == CONFIG_SIMPLE else config for config in own]


@dataclass(frozen=True, slots=True)
class QueryTerms:
    """The lexemes of a query with their weights, and what the pair's archive holds.

    `lexemes`/`weights`: every lexeme any configuration makes of the query, weighted by
    BM25 idf (a lexeme the archive never saw gets the highest weight: the layers above the
    archive may still contain it). `selecting`: the lexemes that select candidates.
    `unknown_words`: query words none of whose lexemes occur in the archive (trigram
    lookup: a misspelt name). `rows`/`avg_length`: the pair's archive size and mean
    lexemes per row; `window_rows`: rows inside the time window (bounded count) or None."""

    lexemes: list[str]
    weights: list[float]
    selecting: list[str]
    unknown_words: list[str]
    rows: int
    avg_length: float
    window_rows: int | None = None
    df: dict[str, int] = field(default_factory=dict)
    speakers: tuple[str, ...] = ()
    """Name-like query words that are a speaker's first name in the pair's archive
    (lowercased): "What did Lena say …" ranks Lena's turns as a list of their own."""
    added_words: frozenset[str] = frozenset()
    """Words the query did not contain but were added as statement forms (`query_forms`:
    "ate" for "eat")."""
    word_of: dict[str, frozenset[str]] = field(default_factory=dict)
    """Per lexeme, the query words it came from."""

    @property
    def topic(self) -> list[str]:
        """The selecting lexemes of the question's own words: not only from an added
        statement form, not a speaker's name (every row of hers has that word)."""
        return [
            lexeme
            for lexeme in self.selecting
            if lexeme not in self.speakers
            and any(word not in self.added_words for word in self.word_of.get(lexeme, ()))
        ]

    @property
    def any_query(self) -> str:
        """The candidate-selecting lexemes OR-ed, as tsquery text ('' when none)."""
        return " | ".join(quote_lexeme(lexeme) for lexeme in self.selecting)

    @property
    def term_queries(self) -> list[str]:
        """One tsquery text per lexeme (same order as `weights`)."""
        return [quote_lexeme(lexeme) for lexeme in self.lexemes]


def quote_lexeme(lexeme: str) -> str:
    """A lexeme as tsquery text: quoted, so it is taken as is (never normalised again)."""
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


def idf(df: int, rows: int) -> float:
    """BM25 inverse document frequency (never negative; df 0 → the largest weight)."""
    return math.log(1.0 + (rows - df + 0.5) / (df + 0.5))


def length_factor(length: float, avg_length: float) -> float:
    """BM25's per-term factor for a one-occurrence term in a row of `length` lexemes."""
    norm = 1.0 - BM25_B + BM25_B * (length / avg_length if avg_length > 0 else 1.0)
    return (BM25_K1 + 1.0) / (1.0 + BM25_K1 * norm)


_TERMS_SQL: Final = """
WITH worte AS (
    SELECT DISTINCT w FROM unnest(tsvector_to_array(to_tsvector('simple', %(q)s))) AS w
    WHERE numnode(plainto_tsquery('german', w)) > 0
      AND numnode(plainto_tsquery('english', w)) > 0
), kandidaten AS (
    SELECT w, unnest(tsvector_to_array(to_tsvector('german', w))) AS lexem FROM worte
    UNION SELECT w, unnest(tsvector_to_array(to_tsvector('english', w))) FROM worte
    UNION SELECT w, w FROM worte
)
SELECT k.w AS word, k.lexem AS lexeme, coalesce(x.df, 0) AS df
FROM kandidaten k
LEFT JOIN archiv_lexeme x
    ON x.user_id = %(u)s AND x.character_id = %(c)s AND x.lexem = k.lexem
"""
"""Content words only: a word either language counts as a stopword ("ich", "the", "will")
carries no meaning worth matching and would, stemmed by the other language, look rare."""

COMPOUND_MIN_HEAD: Final = 4
COMPOUND_MIN_MODIFIER: Final = 4
COMPOUNDS_PER_WORD: Final = 8
"""German compounds (docs/behaviour/memory.md#hybrid-search, "Compounds"). A German
compound names a kind of its last part ("Lieblingsblumen" are Blumen), and the stemmer
keeps it one lexeme. So a noun of the query (capitalised: `name_like`) whose stem has at
least 4 letters is the head of the pair's words that end in it after at least 4 more
letters ("Blume" → "Lieblingsblumen", "Baum" → "Obstbäume"; the 8 most used), and a query
compound's head is a word of the pair ("Fußballmannschaft" → "Mannschaft"). Only nouns:
verbs take prefixes that make other verbs ("lebt" → "eingelebt"); shorter parts split
words that are no compounds ("Schwester" → "west", "Tag" → "Vortag")."""

_COMPOUNDS_SQL: Final = """
WITH stämme AS MATERIALIZED (
    SELECT w, unnest(tsvector_to_array(to_tsvector('german', w))) AS stamm
    FROM unnest(%(nouns)s::text[]) AS w
    WHERE numnode(plainto_tsquery('german', w)) > 0
      AND numnode(plainto_tsquery('english', w)) > 0
), köpfe AS MATERIALIZED (
    SELECT s.w, s.stamm, right(s.stamm, n) AS kopf
    FROM stämme s, generate_series(%(head)s, length(s.stamm) - %(modifier)s) AS n
)
SELECT s.w AS word, k.lexem AS lexeme, k.df, s.stamm AS part
FROM stämme s
CROSS JOIN LATERAL (
    SELECT x.lexem, x.df FROM archiv_lexeme x
    WHERE x.user_id = %(u)s AND x.character_id = %(c)s
      AND x.lexem LIKE '%%' || s.stamm
      AND length(x.lexem) >= length(s.stamm) + %(modifier)s
    ORDER BY x.df DESC, x.lexem LIMIT %(per_word)s
) k
WHERE length(s.stamm) >= %(head)s
UNION ALL
SELECT k.w, x.lexem, x.df, k.stamm
FROM archiv_lexeme x JOIN köpfe k ON k.kopf = x.lexem
WHERE x.user_id = %(u)s AND x.character_id = %(c)s
  AND x.lexem = ANY(ARRAY(SELECT kopf FROM köpfe))
"""
"""Both directions of `COMPOUND_MIN_HEAD` for the query's nouns, one statement: (the noun,
the pair's lexeme, its df, the noun's own stem — the compound match never weighs more than
the word itself). With the vocabulary's statistics the suffix match is a bitmap scan of
its trigram index per noun, and the heads are looked up in its primary key (the array)."""

_PAIR_SQL: Final = (
    "SELECT anzahl AS row_count, laenge AS total_length FROM archiv_paar"
    " WHERE user_id = %(u)s AND character_id = %(c)s"
)

SPEAKER_KEY_SQL: Final = "split_part(lower({alias}.sprecher_name), ' ', 1)"
"""A speaker's key: the first word of the imported name, lowercased (migration 020 indexes
it): "Lena" and "Lena Meyer" are both found by "Lena"."""

_SPEAKERS_SQL: Final = (
    "SELECT DISTINCT " + SPEAKER_KEY_SQL.format(alias="a") + " AS name FROM gespraechsarchiv a"
    " WHERE a.user_id = %(u)s AND a.character_id = %(c)s AND a.sprecher_name IS NOT NULL"
    " AND " + SPEAKER_KEY_SQL.format(alias="a") + " = ANY(%(names)s)"
)

_WINDOW_COUNT_SQL: Final = (
    "SELECT count(*) AS n FROM (SELECT 1 FROM gespraechsarchiv"
    " WHERE user_id = %(u)s AND character_id = %(c)s AND zeit >= %(start)s AND zeit < %(end)s"
    " LIMIT %(cap)s) s"
)


async def query_terms(
    conn: AsyncConnection[Any],
    pair: Pair,
    text: str,
    *,
    window: tuple[Any, Any] | None = None,
    count_limit: int = 0,
) -> QueryTerms:
    """The query's weighted lexemes and the pair's archive statistics in one round trip
    (plus the rows in `window`, counted up to `count_limit`, when a window is given). The
    lexemes are those of its search words (`query_forms.search_words`: no question
    scaffolding, statement forms of its verbs added)."""
    kept, added = question_words(text, _FUNCTION_WORDS)
    params = {"q": " ".join([*kept, *added]), "u": pair.user_id, "c": pair.character_id}
    names = name_like(text)
    nouns = sorted(names & {word.lower() for word in kept})
    async with pipeline(conn):
        terms_cur = await conn.execute(_TERMS_SQL, params)
        pair_cur = await conn.execute(_PAIR_SQL, params)
        compounds_cur = (
            await conn.execute(
                _COMPOUNDS_SQL,
                {
                    **params,
                    "nouns": nouns,
                    "head": COMPOUND_MIN_HEAD,
                    "modifier": COMPOUND_MIN_MODIFIER,
                    "per_word": COMPOUNDS_PER_WORD,
                },
            )
            if nouns
            else None
        )
        speakers_cur = (
            await conn.execute(_SPEAKERS_SQL, {**params, "names": speaker_keys(names)})
            if names
            else None
        )
        window_cur = None
        if window is not None:
            window_cur = await conn.execute(
                _WINDOW_COUNT_SQL,
                {**params, "start": window[0], "end": window[1], "cap": count_limit + 1},
            )
    term_rows = await terms_cur.fetchall()
    compound_rows = await compounds_cur.fetchall() if compounds_cur is not None else []
    stats = await pair_cur.fetchone()
    window_rows = None
    if window_cur is not None:
        counted = await window_cur.fetchone()
        window_rows = int(counted["n"]) if counted else 0
    speakers = (
        tuple(sorted(str(r["name"]) for r in await speakers_cur.fetchall()))
        if speakers_cur is not None
        else ()
    )
    rows = int(stats["row_count"]) if stats else 0
    total_length = int(stats["total_length"]) if stats else 0
    terms = build_terms(
        [(str(r["word"]), str(r["lexeme"]), int(r["df"])) for r in term_rows],
        rows,
        total_length / rows if rows else 0.0,
        window_rows,
        names=names,
        parts=[
            (str(r["word"]), str(r["lexeme"]), int(r["df"]), str(r["part"])) for r in compound_rows
        ],
    )
    word_of: dict[str, set[str]] = {}
    for r in [*term_rows, *compound_rows]:
        word_of.setdefault(str(r["lexeme"]), set()).add(str(r["word"]))
    return replace(
        terms,
        speakers=speakers,
        added_words=frozenset(a.lower() for a in added),
        word_of={lexeme: frozenset(words) for lexeme, words in word_of.items()},
    )


def frequent_df(rows: int) -> float:
    """Above this document frequency a lexeme does not select candidates (`FREQUENT_SHARE`)."""
    return max(FREQUENT_MIN_DF, FREQUENT_SHARE * rows)


def build_terms(
    candidates: list[tuple[str, str, int]],
    rows: int,
    avg_length: float,
    window_rows: int | None = None,
    *,
    names: set[str] | None = None,
    parts: Sequence[tuple[str, str, int, str]] = (),
) -> QueryTerms:
    """QueryTerms from (word, lexeme, df) triples (pure: the ranking rules in one place).
    `names`: the query's name-like words (`name_like`); only they are looked up by trigrams
    (None: every word). `parts`: (word, lexeme, df, stem) of compounds (`_COMPOUNDS_SQL`):
    the lexeme joins the query weighing at most what the word's own stem weighs."""
    df: dict[str, int] = {}
    known_words: set[str] = set()
    words: list[str] = []
    for word, lexeme, count in candidates:
        if word not in words:
            words.append(word)
        df[lexeme] = max(df.get(lexeme, 0), count)
        if count > 0:
            known_words.add(word)
    cap: dict[str, float] = {}
    for word, lexeme, count, stem in parts:
        if lexeme in df and lexeme not in cap:
            continue  # the query's own lexeme: its own weight
        if word not in words:
            words.append(word)
        df[lexeme] = max(df.get(lexeme, 0), count)
        known_words.add(word)
        own = idf(df.get(stem, count), rows)
        cap[lexeme] = max(cap.get(lexeme, 0.0), own)
    lexemes = sorted(df)
    weights = [min(idf(df[lexeme], rows), cap.get(lexeme, math.inf)) for lexeme in lexemes]
    limit = frequent_df(rows)
    selecting = [lexeme for lexeme in lexemes if df[lexeme] <= limit]
    if not selecting and lexemes:
        selecting = sorted(lexemes, key=lambda lexeme: df[lexeme])[:KEEP_RAREST]
    unknown = [
        w
        for w in words
        if w not in known_words and len(w) >= TRIGRAM_MIN_CHARS and (names is None or w in names)
    ]
    return QueryTerms(lexemes, weights, selecting, unknown, rows, avg_length, window_rows, df)


_TEXTS_SQL: Final = """
SELECT e.position, (SELECT sum(t.w) FROM unnest(%(tq)s::tsquery[], %(w)s::float8[]) AS t(q, w)
              WHERE e.tsv @@ t.q) AS score
FROM (SELECT x.position, to_tsvector(x.language::regconfig, x.txt) AS tsv
      FROM unnest(%(texts)s::text[], %(languages)s::text[])
           WITH ORDINALITY AS x(txt, language, position)) e
WHERE e.tsv @@ %(any)s::tsquery ORDER BY score DESC, e.position LIMIT %(k)s
"""


async def queue_rank_texts(
    conn: AsyncConnection[Any], texts: list[str], terms: QueryTerms, k: int
) -> Reply[list[tuple[int, float]]]:
    """(index into `texts`, score) of the k texts that match best by words: for stores that
    are not tables (the short-term memory lives in Redis), indexed on the fly with each
    text's own configuration. Queued in the caller's pipeline (`store/pipelined.py`)."""
    if not texts or not terms.selecting:
        return Reply.ready([])
    cur = await conn.execute(
        _TEXTS_SQL,
        {
            "tq": terms.term_queries,
            "w": terms.weights,
            "any": terms.any_query,
            "texts": texts,
            "languages": [text_config(text) for text in texts],
            "k": int(k),
        },
    )
    return Reply.of(
        cur, lambda rows: [(int(row["position"]) - 1, float(row["score"] or 0.0)) for row in rows]
    )


_SIMILAR_SQL: Final = """
WITH formen AS (
    SELECT w, w AS f FROM unnest(%(words)s::text[]) AS w
    UNION SELECT w, unnest(tsvector_to_array(to_tsvector('german', w))) FROM unnest(%(words)s::text[]) AS w
    UNION SELECT w, unnest(tsvector_to_array(to_tsvector('english', w))) FROM unnest(%(words)s::text[]) AS w
)
SELECT f.w AS word, x.lexem AS lexeme, max(similarity(f.f, x.lexem)) AS s, x.df
FROM formen f JOIN archiv_lexeme x
    ON x.user_id = %(u)s AND x.character_id = %(c)s AND x.lexem %% f.f
GROUP BY f.w, x.lexem, x.df
"""


async def corrected_terms(
    conn: AsyncConnection[Any], pair: Pair, terms: QueryTerms
) -> QueryTerms | None:
    """The lexemes of the pair's vocabulary that `terms.unknown_words` resemble (pg_trgm;
    the word and its stems), weighted by similarity × idf: the query a misspelt name
    becomes. Frequent lexemes (`frequent_df`) are left out: a name is rare, and "Land"
    corrected to "lang" (in 6 % of turns) would rank thousands of rows for nothing. None
    when nothing resembles them."""
    if not terms.unknown_words:
        return None
    # pipeline mode: BEGIN, the threshold, the query and COMMIT go out in one round trip
    async with pipeline(conn):
        reply = await queue_corrected_terms(conn, pair, terms)
    return await reply.read()


async def queue_corrected_terms(
    conn: AsyncConnection[Any], pair: Pair, terms: QueryTerms
) -> Reply[QueryTerms | None]:
    """`corrected_terms` queued in the caller's pipeline; the threshold stays local to
    its statement."""
    if not terms.unknown_words:
        return Reply.ready(None)
    async with local_settings(conn):
        await conn.execute(
            "SELECT set_config('pg_trgm.similarity_threshold', %s, true)", (str(TRIGRAM_THRESHOLD),)
        )
        cur = await conn.execute(
            _SIMILAR_SQL,
            {"words": terms.unknown_words, "u": pair.user_id, "c": pair.character_id},
        )
    return Reply.of(cur, lambda rows: _corrected(terms, rows))


def _corrected(terms: QueryTerms, rows: Rows) -> QueryTerms | None:
    """The corrected query from the similar lexemes found (pure)."""
    best: dict[str, list[tuple[float, str, int]]] = {}
    for row in rows:
        best.setdefault(str(row["word"]), []).append(
            (float(row["s"]), str(row["lexeme"]), int(row["df"]))
        )
    weights: dict[str, float] = {}
    frequent = frequent_df(terms.rows)
    for found in best.values():
        for similarity, lexeme, df in sorted(found, reverse=True)[:TRIGRAM_PER_WORD]:
            if df > frequent:  # a misspelt rare name; never a word of every other turn
                continue
            weights[lexeme] = max(weights.get(lexeme, 0.0), similarity * idf(df, terms.rows))
    if not weights:
        return None
    lexemes = sorted(weights)
    return QueryTerms(
        lexemes,
        [weights[lexeme] for lexeme in lexemes],
        lexemes,
        [],
        terms.rows,
        terms.avg_length,
        terms.window_rows,
    )
