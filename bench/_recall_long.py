"""The English long conversation of bench/memory_recall.py (`--languages en-long`), built in
code: a SillyTavern group chat between the person (Sam), the character (Nova) and three
named friends (Lena, Tom, Priya) over eleven simulated months, several hundred turns.

Written by hand for this bench (no public data set): it asks what a long English history
asks of the search that the parallel German/English set (`_recall_data.py`) does not:

- `sprecher`: one topic talked about by all three friends, each saying something else; the
  question names one ("What did Lena say about the allotment?"). Only her turn is evidence —
  the text never names its speaker, so this needs the imported `name`.
- `aenderung`: a fact that changed ("I live in Leeds" … months later "I live in Bristol
  now"); the question asks for the present value, the evidence is the latest statement.
- `wann`: "When did I …?" about an event told once; sometimes the event is told across two
  turns (Nova asks, Sam answers): both are evidence.
- `paar`: Nova asks, Sam answers in a few words; the question repeats neither turn's words
  exactly. Both turns are evidence (a question's evidence is often two turns).
- `zeit`: one topic in several months; the question names the month or season (a window).

A question counts as found when any of its evidence turns is among the first k hits.
The evidence ids are the importer's own (`st-…` digests), read by parsing the written file
with `novaberg.imports.chat_formats` — the same ids `sources` name after the import.
"""

from __future__ import annotations

import json
import random
import sys
from dataclasses import dataclass
from datetime import UTC, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import _recall_long_de as german
from _recall_data import CHARACTER, SPAN_DAYS, SPAN_START, USER, Dataset, Query, _filler
from novaberg.imports.chat_formats import parse_chat

LANG = "en-long"
LANG_GERMAN = "de-long"
LONG_SETS = (LANG, LANG_GERMAN)
"""The long sets by name (`--languages`): English and its German counterpart."""
PERSON, COMPANION = "Sam", "Nova"
FRIENDS = ("Lena", "Tom", "Priya")

# topic, what each friend says about it (none names its speaker), who the question asks for
SPEAKER_TOPICS: list[tuple[str, dict[str, str]]] = [
    ("the allotment", {
        "Lena": "The allotment is my favourite place, I would grow pumpkins there all year.",
        "Tom": "The allotment is far too much work, the weeds win every single summer.",
        "Priya": "The allotment committee wants to raise the fees again, it's outrageous.",
    }),
    ("the new bakery", {
        "Lena": "The new bakery does a cardamom bun that is worth the queue.",
        "Tom": "The new bakery is overpriced, four pounds for a croissant.",
        "Priya": "The new bakery owner used to be a chemist, apparently.",
    }),
    ("the book club", {
        "Lena": "For the book club I'd like us to read something funny for once.",
        "Tom": "The book club is just an excuse for wine, which is fine by me.",
        "Priya": "I'm hosting the book club next month, I'll make dal.",
    }),
    ("the camping trip", {
        "Lena": "On the camping trip I want to swim in the lake every morning.",
        "Tom": "For the camping trip I'll bring the big tent, it sleeps six.",
        "Priya": "The camping trip clashes with my cousin's wedding, I can only come Sunday.",
    }),
    ("the office move", {
        "Lena": "The office move means I'll finally have a window desk.",
        "Tom": "The office move is chaos, half the monitors are missing.",
        "Priya": "After the office move my commute is twenty minutes longer.",
    }),
    ("the choir concert", {
        "Lena": "At the choir concert I have a solo in the second half, I'm terrified.",
        "Tom": "I'll only come to the choir concert if there's a bar.",
        "Priya": "The choir concert tickets are sold out already.",
    }),
    ("the neighbour's dog", {
        "Lena": "The neighbour's dog is a sweetheart, he brings me sticks.",
        "Tom": "The neighbour's dog barks at five in the morning, I could scream.",
        "Priya": "The neighbour's dog dug up my tulips twice.",
    }),
    ("the bike ride to the coast", {
        "Lena": "For the bike ride to the coast we should stop at the tea room in Wells.",
        "Tom": "The bike ride to the coast is ninety miles, that's madness.",
        "Priya": "I'll do the bike ride to the coast on my electric bike, no shame.",
    }),
    ("the flat hunt", {
        "Lena": "In the flat hunt I'd say pick light over space every time.",
        "Tom": "The flat hunt is hopeless, every viewing has thirty people.",
        "Priya": "For the flat hunt, my landlord has a place free in June.",
    }),
    ("the wedding plans", {
        "Lena": "For the wedding plans I vote for a barn and a ceilidh band.",
        "Tom": "The wedding plans are way too big, just go to the registry office.",
        "Priya": "For the wedding plans I can do the flowers, I did my sister's.",
    }),
    ("the pub quiz", {
        "Lena": "At the pub quiz we lost on the geography round again.",
        "Tom": "The pub quiz team needs someone who knows football.",
        "Priya": "The pub quiz moved to Wednesdays.",
    }),
    ("the garden party", {
        "Lena": "For the garden party I'll bake a lemon drizzle cake.",
        "Tom": "The garden party needs a gazebo in case it rains.",
        "Priya": "I can't come to the garden party, I'm on call that weekend.",
    }),
]  # fmt: skip

TOPIC_MENTIONS = [
    "Any news about {t}?",
    "I keep thinking about {t}.",
    "{T} came up at lunch again.",
    "Let's talk about {t} at the weekend.",
    "Honestly, I have no strong opinion on {t}.",
    "Remind me to ask about {t}.",
    "Did anyone write down the plan for {t}?",
    "{T} again? We talked about that last week.",
]
"""Turns about a `sprecher` topic by anyone but the friend asked about: the topic's words
are everywhere, only the speaker tells the evidence apart."""

# values in the order they were said (the last is the answer), the question
CHANGED: list[tuple[list[str], str]] = [
    (["I live in Leeds at the moment, close to the university.",
      "We finally moved, I live in Bristol now, right by the harbour."],
     "Where do I live these days?"),
    (["I work at the library on Elm Street.",
      "I quit the library, I work at the bike shop now."],
     "Where is my job?"),
    (["My girlfriend is called Mara.",
      "Mara and I broke up. I'm seeing Jules now."],
     "Who am I dating at the moment?"),
    (["I drive a little blue Fiat.",
      "I sold the Fiat and bought a green Skoda estate."],
     "What car do I drive now?"),
    (["My favourite band is Elbow.",
      "I've been playing Big Thief on repeat, they're my favourite band now."],
     "Which band do I like most?"),
    (["I take the 7:40 train to work.",
      "I switched to the 8:15 train, the early one was always packed."],
     "Which train do I catch in the morning?"),
    (["The cat weighs four kilos.", "The vet says the cat is up to five kilos.",
      "The cat is six kilos now, the vet put her on a diet."],
     "How heavy is my cat?"),
    (["I'm learning Spanish with an app.",
      "I dropped Spanish and started learning Japanese instead."],
     "Which language am I studying?"),
    (["My rent is 750 pounds a month.",
      "The landlord raised my rent to 820 pounds."],
     "How much rent do I pay?"),
    (["I go swimming on Tuesdays.",
      "I moved swimming to Thursday mornings."],
     "On which day do I swim?"),
]  # fmt: skip

# one event told once (one turn, or Nova's question and Sam's answer), the question
WHEN: list[tuple[list[tuple[str, str]], str]] = [
    ([(USER, "Today was my very first pottery class, my bowl collapsed.")],
     "When did I start pottery?"),
    ([(USER, "We adopted a rescue dog today, she's called Biscuit.")],
     "When did we get Biscuit?"),
    ([(USER, "I handed in my thesis this morning!")],
     "When did I submit my thesis?"),
    ([(USER, "My sister's baby was born last night, a little boy called Ezra.")],
     "When was my nephew born?"),
    ([(USER, "I broke my wrist falling off the ladder.")],
     "When did I break my wrist?"),
    ([(CHARACTER, "So, how did the driving test go?"),
      (USER, "Passed, on the second try!")],
     "When did I pass my driving test?"),
    ([(CHARACTER, "Did the kitchen get finished?"),
      (USER, "Yes, we painted it yellow this weekend.")],
     "When did we paint the kitchen?"),
    ([(CHARACTER, "How did the half marathon go?"),
      (USER, "Two hours and five minutes, my first one.")],
     "When did I run my first half marathon?"),
]  # fmt: skip

# Nova asks, Sam answers briefly, the later question
PAIRS: list[tuple[str, str, str]] = [
    ("Which bakery do you get your bread from?", "Hartley's, the one by the canal.",
     "Where do I usually buy bread?"),
    ("What did the doctor say about your back?", "Slipped disc, six weeks of physio.",
     "What was the diagnosis for my back?"),
    ("Who looks after your plants while you're away?", "My neighbour Agnes.",
     "Who waters my plants when I travel?"),
    ("What are you getting your dad for his birthday?",
     "A fishing rod, he's been hinting for months.", "What present did I choose for my father?"),
    ("Which film did you see on your birthday?", "Dune, in the big cinema.",
     "What did I watch at the cinema on my birthday?"),
    ("What's your mum's favourite flower?", "Sweet peas.", "Which flowers does my mother love?"),
    ("How long is the drive to your parents?", "About three hours if the M5 is clear.",
     "How far away do my parents live by car?"),
    ("What's the wifi password at the cabin?", "Bluefinch42, all one word.",
     "What was the internet password at the cabin?"),
]  # fmt: skip

# one topic in several months ((year, month) → text); the question names the first month
TIMED: list[tuple[dict[tuple[int, int], str], str]] = [
    ({(2026, 2): "The engineer replaced the boiler's pump, finally hot water again.",
      (2025, 11): "The boiler made a banging noise all night.",
      (2025, 8): "We had the boiler serviced."},
     "What happened with the boiler in February?"),
    ({(2025, 10): "At the allotment open day we won a prize for the marrows.",
      (2026, 4): "At the allotment open day it rained the whole time.",
      (2025, 7): "The allotment open day is being planned."},
     "What happened at the allotment open day last autumn?"),
    ({(2026, 1): "My car failed its MOT because of the brakes.",
      (2025, 9): "The car's MOT is due soon.",
      (2026, 3): "The car passed the MOT retest."},
     "What happened with the MOT in January?"),
    ({(2025, 12): "Our Christmas market stall sold out of candles by noon.",
      (2025, 9): "We signed up for a Christmas market stall.",
      (2026, 2): "The Christmas market organisers sent the bill for the stall."},
     "How did the market stall go in December?"),
    ({(2026, 3): "At work I got promoted to team lead.",
      (2025, 10): "At work there's talk of a team lead position.",
      (2026, 4): "At work the team lead training started."},
     "What happened at work in March?"),
    ({(2025, 7): "In the summer holidays we hiked the Pembrokeshire coast path.",
      (2026, 2): "I printed photos from the Pembrokeshire coast path.",
      (2025, 11): "Maybe we go back to the Pembrokeshire coast path one day."},
     "What did we do on the coast path last summer?"),
]  # fmt: skip

SPEAKER_QUESTION = "What did {name} say about {topic}?"


@dataclass(frozen=True, slots=True)
class Texts:
    """The text of one long set; the shape (who says what when) is the same for each."""

    speaker_question: str
    speaker_topics: list[tuple[str, dict[str, str]]]
    topic_mentions: list[str]
    changed: list[tuple[list[str], str]]
    when: list[tuple[list[tuple[str, str]], str]]
    pairs: list[tuple[str, str, str]]
    timed: list[tuple[dict[tuple[int, int], str], str]]


def _texts(lang: str) -> Texts:
    """The tables of `lang` (English here, German in bench/_recall_long_de.py)."""
    if lang not in LONG_SETS:
        raise ValueError(f"no long set {lang!r}")
    source: Any = german if lang == LANG_GERMAN else sys.modules[__name__]
    return Texts(
        source.SPEAKER_QUESTION,
        source.SPEAKER_TOPICS,
        source.TOPIC_MENTIONS,
        source.CHANGED,
        source.WHEN,
        source.PAIRS,
        source.TIMED,
    )


Line = tuple[str, str, str | None]
"""(who, text, evidence key or None); who is a name (PERSON, COMPANION or a friend)."""


def _who(speaker: str) -> str:
    return PERSON if speaker == USER else COMPANION


def build_long_dataset(lang: str = LANG, *, seed: int = 34, sessions: int = 70) -> Dataset:
    """The group chat and its questions (same seed, same data); `turns` are the lines of a
    SillyTavern export (its header first). `lang`: `en-long` or `de-long` (the same shape
    in German, bench/_recall_long_de.py)."""
    texts = _texts(lang)
    filler_lang = "de" if lang == LANG_GERMAN else "en"
    rng = random.Random(f"{seed}-{lang}")
    days = sorted(
        SPAN_START + timedelta(days=d, hours=rng.randint(8, 21))
        for d in rng.sample(range(SPAN_DAYS), sessions)
    )
    blocks: dict[int, list[list[Line]]] = {i: [] for i in range(len(days))}
    questions: list[tuple[str, str, list[str]]] = []

    def place(block: list[Line], within: list[int] | None = None) -> None:
        blocks[rng.choice(within or list(range(len(days))))].append(block)

    def in_month(year: int, month: int) -> list[int]:
        return [i for i, day in enumerate(days) if (day.year, day.month) == (year, month)]

    for index, (topic, said) in enumerate(texts.speaker_topics):
        asked = FRIENDS[index % len(FRIENDS)]
        for friend, text in said.items():
            key = f"sprecher-{index}" if friend == asked else None
            place([(friend, text, key)])
        others = [PERSON, COMPANION, *(f for f in FRIENDS if f != asked)]
        for mention in texts.topic_mentions:
            text = mention.format(t=topic, T=topic[0].upper() + topic[1:])
            place([(rng.choice(others), text, None)])
        questions.append(
            (
                "sprecher",
                texts.speaker_question.format(name=asked, topic=topic),
                [f"sprecher-{index}"],
            )
        )

    for index, (values, question) in enumerate(texts.changed):
        # each value in its own stretch of the history, in order; the last is the evidence
        stretch = len(days) // len(values)
        for position, text in enumerate(values):
            key = f"aenderung-{index}" if position == len(values) - 1 else None
            place([(PERSON, text, key)], list(range(position * stretch, (position + 1) * stretch)))
        questions.append(("aenderung", question, [f"aenderung-{index}"]))

    for index, (lines, question) in enumerate(texts.when):
        keys = [f"wann-{index}-{n}" for n in range(len(lines))]
        place([(_who(s), text, key) for (s, text), key in zip(lines, keys, strict=True)])
        questions.append(("wann", question, keys))

    for index, (asked_by_nova, answer, question) in enumerate(texts.pairs):
        keys = [f"paar-{index}-0", f"paar-{index}-1"]
        place([(COMPANION, asked_by_nova, keys[0]), (PERSON, answer, keys[1])])
        questions.append(("paar", question, keys))

    for index, (by_month, question) in enumerate(texts.timed):
        for position, ((year, month), text) in enumerate(by_month.items()):
            key = f"zeit-{index}" if position == 0 else None
            place([(PERSON, text, key)], in_month(year, month) or None)
        questions.append(("zeit", question, [f"zeit-{index}"]))

    lines: list[dict[str, Any]] = [
        {"user_name": PERSON, "character_name": COMPANION, "create_date": days[0].isoformat()}
    ]
    keys: list[str | None] = []
    for session, day in enumerate(days):
        chat: list[list[Line]] = []
        for _ in range(rng.randint(4, 7)):
            friend = rng.choice(FRIENDS) if rng.random() < 0.35 else COMPANION
            chat.append(
                [
                    (PERSON, _filler(rng, filler_lang, USER), None),
                    (friend, _filler(rng, filler_lang, CHARACTER), None),
                ]
            )
        for block in blocks[session]:
            if block[-1][0] == PERSON:  # somebody answers what Sam said
                block = [*block, (COMPANION, _filler(rng, filler_lang, CHARACTER), None)]
            chat.insert(rng.randint(0, len(chat)), block)
        moment = day
        for block in chat:
            for who, text, key in block:
                moment += timedelta(seconds=rng.randint(20, 240))
                lines.append(
                    {
                        "name": who,
                        "is_user": who == PERSON,
                        "is_system": False,
                        "send_date": moment.astimezone(UTC).isoformat(),
                        "mes": text,
                    }
                )
                keys.append(key)

    parsed = parse_chat(
        "\n".join(json.dumps(line, ensure_ascii=False) for line in lines).encode(),
        tz=ZoneInfo("UTC"),
    )
    if len(parsed.turns) != len(keys):
        raise RuntimeError(f"{len(parsed.turns)} turns parsed of {len(keys)} written")
    ids = {key: turn.source_id for key, turn in zip(keys, parsed.turns, strict=True) if key}
    dataset = Dataset(lang, turns=lines)
    for kind, question, evidence in questions:
        found = [ids[key] for key in evidence]
        dataset.queries.append(Query(kind, kind, question, found[0], tuple(found[1:])))
    return dataset


def turn_count(dataset: Dataset) -> int:
    """The turns of the chat (its lines without the header)."""
    return len(dataset.turns) - 1


if __name__ == "__main__":  # a look at the data: counts per kind
    for name in LONG_SETS:
        data = build_long_dataset(name)
        kinds: dict[str, int] = {}
        for query in data.queries:
            kinds[query.kind] = kinds.get(query.kind, 0) + 1
        print(name, turn_count(data), "turns;", kinds)
