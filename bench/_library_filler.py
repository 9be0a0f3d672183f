"""Library filler for the recall bench (`bench/memory_recall.py --library-chunks N`): a folder
of Markdown files of the searched person — recipes, device manuals, garden and meeting
notes, travel journals, letters — written from word pools so that passages differ in
vocabulary and length the way a real notes folder does (a few words in most passages,
most words in a few), and indexed with the real `novaberg library add` (a subprocess, as a
person would run it: parsing, chunking, embedding, the statistics triggers).

Every `## ` section is one paragraph of 150–900 characters, so it becomes exactly one
passage (memory/library/chunking.py: a heading starts a passage, 1 200 characters at most);
a file holds `SECTIONS` of them. The texts never state the data sets' facts: they are
distractors that share everyday words with the questions ("work", "garden", "Arbeit").
"""

from __future__ import annotations

import asyncio
import json
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Final

SECTIONS: Final = 10
"""Passages per file."""

_POOLS: Final[dict[str, dict[str, tuple[str, ...]]]] = {
    "en": {
        "food": (
            "onions", "garlic", "carrots", "lentils", "chickpeas", "spinach", "leeks",
            "mushrooms", "potatoes", "rice", "barley", "tomatoes", "courgettes", "peppers",
            "butter", "flour", "yeast", "honey", "lemons", "ginger", "cumin", "paprika",
            "thyme", "rosemary", "basil", "parsley", "cream", "cheddar", "feta", "walnuts",
            "almonds", "oats", "apples", "pears", "plums", "rhubarb", "beetroot", "fennel",
        ),
        "verb_food": (
            "chop", "dice", "simmer", "roast", "stir", "whisk", "fold", "knead", "season",
            "drain", "blend", "grate", "toast", "soak", "glaze", "reduce", "marinate",
        ),
        "device": (
            "dishwasher", "router", "thermostat", "boiler", "printer", "espresso machine",
            "washing machine", "e-bike", "lawn mower", "smoke alarm", "heat pump",
            "sewing machine", "drill", "projector", "car radio", "baby monitor",
        ),
        "part": (
            "filter", "valve", "display", "reset button", "battery", "hose", "fuse",
            "bracket", "seal", "drum", "sensor", "antenna", "cable", "motor", "nozzle",
            "water tank", "power supply", "latch", "gasket", "fan",
        ),
        "verb_device": (
            "press", "hold", "unscrew", "clean", "replace", "check", "tighten", "rinse",
            "disconnect", "restart", "calibrate", "lubricate", "inspect", "align",
        ),
        "plant": (
            "roses", "beans", "lettuce", "strawberries", "raspberries", "dahlias", "lavender",
            "sunflowers", "chives", "squash", "cabbages", "hydrangeas", "tulips", "clematis",
            "blueberries", "currants", "asparagus", "peas", "sweetcorn", "marigolds",
        ),
        "place": (
            "Lisbon", "the Lake District", "Bruges", "Edinburgh", "Cornwall", "Vienna",
            "Porto", "the Dolomites", "Copenhagen", "Galway", "Seville", "Krakow", "Bergen",
            "the Black Forest", "Ghent", "Ljubljana", "Bath", "Annecy", "Trieste", "Oban",
        ),
        "topic": (
            "the budget", "the release plan", "hiring", "the office move", "onboarding",
            "the supplier contract", "customer feedback", "the quarterly review",
            "the training day", "the new rota", "security updates", "the website",
            "travel expenses", "the inventory", "the pilot project", "the audit",
        ),
        "person": (
            "Margaret", "Dev", "Agnes", "Tobias", "Ruth", "Kwame", "Ines", "Harold",
            "Freya", "Osman", "Beatrix", "Callum", "Noor", "Pavel", "Winifred", "Rafael",
        ),
        "adj": (
            "quiet", "windy", "bright", "muddy", "crisp", "humid", "grey", "sunny",
            "stormy", "mild", "foggy", "chilly", "warm", "damp", "clear", "drizzly",
        ),
    },
    "de": {
        "food": (
            "Zwiebeln", "Knoblauch", "Karotten", "Linsen", "Kichererbsen", "Spinat", "Lauch",
            "Pilze", "Kartoffeln", "Reis", "Graupen", "Tomaten", "Zucchini", "Paprika",
            "Butter", "Mehl", "Hefe", "Honig", "Zitronen", "Ingwer", "Kreuzkümmel",
            "Thymian", "Rosmarin", "Basilikum", "Petersilie", "Sahne", "Bergkäse", "Feta",
            "Walnüsse", "Mandeln", "Haferflocken", "Äpfel", "Birnen", "Zwetschgen",
            "Rhabarber", "Rote Bete", "Fenchel", "Quark",
        ),
        "verb_food": (
            "schneiden", "würfeln", "köcheln", "rösten", "umrühren", "schlagen", "unterheben",
            "kneten", "würzen", "abgießen", "pürieren", "reiben", "anbraten", "einweichen",
            "glasieren", "einkochen", "marinieren",
        ),
        "device": (
            "Spülmaschine", "Router", "Thermostat", "Heizkessel", "Drucker", "Siebträger",
            "Waschmaschine", "E-Bike", "Rasenmäher", "Rauchmelder", "Wärmepumpe",
            "Nähmaschine", "Bohrmaschine", "Beamer", "Autoradio", "Babyfon",
        ),
        "part": (
            "Filter", "Ventil", "Display", "Reset-Taste", "Akku", "Schlauch", "Sicherung",
            "Halterung", "Dichtung", "Trommel", "Sensor", "Antenne", "Kabel", "Motor",
            "Düse", "Wassertank", "Netzteil", "Verriegelung", "Lüfter",
        ),
        "verb_device": (
            "drücken", "halten", "abschrauben", "reinigen", "ersetzen", "prüfen",
            "festziehen", "ausspülen", "abziehen", "neu starten", "kalibrieren", "ölen",
            "kontrollieren", "ausrichten",
        ),
        "plant": (
            "Rosen", "Bohnen", "Salat", "Erdbeeren", "Himbeeren", "Dahlien", "Lavendel",
            "Sonnenblumen", "Schnittlauch", "Kürbisse", "Kohl", "Hortensien", "Tulpen",
            "Clematis", "Heidelbeeren", "Johannisbeeren", "Spargel", "Erbsen", "Mais",
            "Ringelblumen",
        ),
        "place": (
            "Lissabon", "Südtirol", "Brügge", "Edinburgh", "die Bretagne", "Wien", "Porto",
            "die Dolomiten", "Kopenhagen", "Galway", "Sevilla", "Krakau", "Bergen",
            "den Schwarzwald", "Gent", "Ljubljana", "Lindau", "Annecy", "Triest", "Usedom",
        ),
        "topic": (
            "das Budget", "den Releaseplan", "Neueinstellungen", "den Büroumzug",
            "die Einarbeitung", "den Lieferantenvertrag", "Kundenfeedback",
            "die Quartalsrunde", "den Schulungstag", "den neuen Dienstplan",
            "Sicherheitsupdates", "die Webseite", "Reisekosten", "die Inventur",
            "das Pilotprojekt", "das Audit",
        ),
        "person": (
            "Margarete", "Deniz", "Agnes", "Tobias", "Ruth", "Kwame", "Ines", "Harald",
            "Freya", "Osman", "Beate", "Konrad", "Nura", "Pavel", "Wiebke", "Rafael",
        ),
        "adj": (
            "ruhig", "windig", "hell", "matschig", "klar", "schwül", "grau", "sonnig",
            "stürmisch", "mild", "neblig", "kühl", "warm", "feucht", "frisch", "regnerisch",
        ),
    },
}  # fmt: skip

_SENTENCES: Final[dict[str, dict[str, tuple[str, ...]]]] = {
    "en": {
        "recipe": (
            "{Verb_food} the {food} and the {food2} for {n} minutes.",
            "Add {n} grams of {food} and {verb_food} until soft.",
            "A pinch of {food2} keeps the {food} from tasting flat.",
            "Serves {n2}; it keeps for {n2} days in the fridge.",
            "{Person} prefers it with more {food} and less {food2}.",
            "Let it rest for {n} minutes before you {verb_food} it again.",
        ),
        "manual": (
            "{Verb_device} the {part} of the {device} before the first use.",
            "If the {part} blinks {n2} times, {verb_device} the {part2} and wait {n} seconds.",
            "The {device} needs a new {part} every {n2} months.",
            "Never {verb_device} the {part} while the {device} is running.",
            "Error {n}: the {part2} is blocked; {verb_device} it and restart the {device}.",
            "Warranty covers the {part} for {n2} years from the date of purchase.",
        ),
        "garden": (
            "Planted the {plant} along the south fence; the soil was {adj}.",
            "The {plant} need water every {n2} days once it gets {adj}.",
            "Cut back the {plant2} after flowering, about {n} centimetres.",
            "Slugs again on the {plant}; {Person} suggested copper tape.",
            "Next year put the {plant2} where the {plant} were.",
            "Harvested {n} kilos of {plant} this week, a {adj} week overall.",
        ),
        "meeting": (
            "Meeting with {Person} about {topic}; decision postponed by {n2} weeks.",
            "{Person} will draft a proposal on {topic2} by Friday.",
            "Open points: {topic}, {topic2} and the room booking.",
            "We agreed to review {topic} every {n2} weeks.",
            "Action for me: send the figures on {topic2} to {Person2}.",
            "The numbers for {topic} were {n} percent above plan.",
        ),
        "travel": (
            "Day {n2} in {place}: {adj} morning, long walk along the water.",
            "Took the early train from {place} to {place2}, {n} minutes late.",
            "Dinner with {Person} in a small place near the harbour in {place}.",
            "The museum in {place2} was closed on Mondays, so we hiked instead.",
            "Paid {n} euros for the room; breakfast was included.",
            "Would go back to {place} in spring, the {adj} weather suited it.",
        ),
        "letter": (
            "Dear {Person}, thank you for the parcel, it arrived on a {adj} Tuesday.",
            "We are all well; {Person2} started a new course and enjoys it.",
            "The roof repair cost {n} pounds in the end, more than we hoped.",
            "Do write when you know your plans for {place}.",
            "With love, and greetings to everyone from {Person2}.",
            "Enclosed are {n2} photos from the garden and the {plant}.",
        ),
    },
    "de": {
        "recipe": (
            "{Food} und {food2} {n} Minuten {verb_food}.",
            "{n} Gramm {food} dazugeben und weich {verb_food}.",
            "Eine Prise {food2} hält die {food} frisch im Geschmack.",
            "Reicht für {n2} Personen und hält {n2} Tage im Kühlschrank.",
            "{Person} mag es mit mehr {food} und weniger {food2}.",
            "{n} Minuten ruhen lassen, dann noch einmal {verb_food}.",
        ),
        "manual": (
            "Vor dem ersten Gebrauch den {part} der {device} {verb_device}.",
            "Blinkt der {part} {n2}-mal, den {part2} {verb_device} und {n} Sekunden warten.",
            "Die {device} braucht alle {n2} Monate einen neuen {part}.",
            "Den {part} nie {verb_device}, solange die {device} läuft.",
            "Fehler {n}: der {part2} ist blockiert; {verb_device} und die {device} neu starten.",
            "Die Garantie deckt den {part} {n2} Jahre ab Kaufdatum.",
        ),
        "garden": (
            "{Plant} am Südzaun gepflanzt; der Boden war {adj}.",
            "Die {plant} brauchen alle {n2} Tage Wasser, wenn es {adj} wird.",
            "Die {plant2} nach der Blüte um etwa {n} Zentimeter zurückschneiden.",
            "Wieder Schnecken an den {plant}; {Person} rät zu Kupferband.",
            "Nächstes Jahr die {plant2} dorthin, wo die {plant} standen.",
            "Diese Woche {n} Kilo {plant} geerntet, insgesamt eine {adj}e Woche.",
        ),
        "meeting": (
            "Besprechung mit {Person} über {topic}; Entscheidung um {n2} Wochen vertagt.",
            "{Person} schreibt bis Freitag einen Vorschlag für {topic2}.",
            "Offene Punkte: {topic}, {topic2} und die Raumbuchung.",
            "Wir schauen uns {topic} alle {n2} Wochen wieder an.",
            "Für mich: die Zahlen zu {topic2} an {Person2} schicken.",
            "Die Zahlen für {topic} lagen {n} Prozent über Plan.",
        ),
        "travel": (
            "Tag {n2} in {place}: {adj}er Morgen, langer Spaziergang am Wasser.",
            "Mit dem frühen Zug von {place} nach {place2}, {n} Minuten Verspätung.",
            "Abendessen mit {Person} in einem kleinen Lokal am Hafen von {place}.",
            "Das Museum in {place2} war montags zu, also sind wir gewandert.",
            "{n} Euro für das Zimmer bezahlt, Frühstück inklusive.",
            "Im Frühling wieder nach {place}, das {adj}e Wetter passte gut.",
        ),
        "letter": (
            "Liebe {Person}, danke für das Paket, es kam an einem {adj}en Dienstag an.",
            "Uns geht es gut; {Person2} hat einen neuen Kurs angefangen.",
            "Die Dachreparatur hat am Ende {n} Euro gekostet, mehr als gehofft.",
            "Schreib, sobald du deine Pläne für {place} kennst.",
            "Herzlich, und Grüße an alle von {Person2}.",
            "Anbei {n2} Fotos aus dem Garten und von den {plant}.",
        ),
    },
}

_TITLES: Final[dict[str, dict[str, str]]] = {
    "en": {"recipe": "Recipe", "manual": "Manual", "garden": "Garden notes",
           "meeting": "Meeting notes", "travel": "Travel journal", "letter": "Letters"},
    "de": {"recipe": "Rezept", "manual": "Anleitung", "garden": "Gartennotizen",
           "meeting": "Besprechungsnotizen", "travel": "Reisetagebuch", "letter": "Briefe"},
}  # fmt: skip


def _fill(template: str, pools: dict[str, tuple[str, ...]], rng: random.Random) -> str:
    values: dict[str, str] = {"n": str(rng.randint(2, 95)), "n2": str(rng.randint(2, 9))}
    for slot, pool in pools.items():
        first, second = rng.sample(pool, 2)
        for key, value in ((slot, first), (f"{slot}2", second)):
            values[key] = value
            values[key[:1].upper() + key[1:]] = value[:1].upper() + value[1:]
    return template.format(**values)


def paragraph(lang: str, kind: str, rng: random.Random) -> str:
    """One section's paragraph: 2–9 sentences of one kind (150–900 characters)."""
    pools, sentences = _POOLS[lang], _SENTENCES[lang][kind]
    return " ".join(_fill(rng.choice(sentences), pools, rng) for _ in range(rng.randint(2, 9)))


def write_library(folder: Path, lang: str, passages: int, *, seed: int = 34) -> int:
    """Write Markdown files holding `passages` sections under `folder` (sub-folders per
    kind); how many files. Deterministic for a seed."""
    rng = random.Random(seed)
    kinds = list(_SENTENCES[lang])
    written = 0
    files = 0
    while written < passages:
        kind = kinds[files % len(kinds)]
        sections = min(SECTIONS, passages - written)
        title = f"{_TITLES[lang][kind]} {files + 1}"
        lines = [f"# {title}", ""]
        for number in range(sections):
            lines += [f"## {title}.{number + 1}", "", paragraph(lang, kind, rng), ""]
        target = folder / kind / f"{kind}-{files + 1:05d}.md"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("\n".join(lines), encoding="utf-8")
        written += sections
        files += 1
    return files


def library_add(env: dict[str, str], folder: Path, user: str) -> dict[str, Any]:
    """`novaberg library add FOLDER --user U --json` in a subprocess: its report, with the
    seconds it took (`sekunden`)."""
    novaberg = Path(sys.executable).with_name("novaberg")
    started = time.perf_counter()
    done = subprocess.run(
        [str(novaberg), "library", "add", str(folder), "--user", user, "--json"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"library add failed ({done.returncode}): {done.stderr.strip()[-500:]}")
    report = json.loads(done.stdout)
    reports = report if isinstance(report, list) else [report]
    return {"bibliothek": reports, "sekunden": round(time.perf_counter() - started, 1)}


async def add_library(bench: Any, folder: Path, lang: str, passages: int, user: str) -> dict:
    """The filler written to `folder` (unless there from an earlier run) and indexed for
    `user` with `novaberg library add`; the report, with the passages she holds in all."""
    if not folder.exists():
        write_library(folder, lang, passages)
    report = await asyncio.to_thread(library_add, bench.env, folder, user)
    async with bench.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT coalesce(max(anzahl), 0) AS n FROM bibliothek_person WHERE user_id = %s",
            (user,),
        )
        row = await cur.fetchone()
    return {**report, "abschnitte_gesamt": int(row["n"]) if row else 0}
