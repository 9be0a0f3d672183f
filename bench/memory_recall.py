"""Memory recall: does the hybrid search find the turn that states a fact, asked later in
other words — and how fast is it in a large archive?

The data set is built in code (bench/_recall_data.py: ~2 000 turns of everyday chat over
eleven simulated months, 80 facts stated once, distractors sharing the questions' words,
German and English in parallel), written as a plain JSONL file and imported with
`novaberg import chat` (a subprocess, as a person would run it). A third set, `en-long`
(bench/_recall_long.py), is a long English SillyTavern group chat with named speakers,
changed facts and "when did" questions, and `de-long` the same shape in German; the
languages are printed side by side. Each question is searched
with `memory.search.search_memory` as shipped, restricted to one set of methods per row:

- `vektor` — the vector search alone (the baseline the archive would have without words);
- `lexikalisch` — BM25 over PostgreSQL full-text search alone;
- `vektor+kontext`, `lexikalisch+kontext+trigramm` — one kind of search with everything it
  has: its second view (the turn with its predecessor) and, for words, the trigram list;
- `fusion ohne kontext` — the fusion without the turn-with-predecessor view;
- `fusion ohne zeitfenster` — every list, but a time expression does not narrow the search
  (the plain fused search that questions about time must not lose against);
- `fusion ohne aktuell` — every list, but the newer statement of a changed fact does not
  move ahead of the older one (memory/search/supersession.py);
- `fusion` — every list fused by reciprocal rank fusion: what ships.

Evidence recall@k: the share of questions for which a hit among the first k names the
stating turn in its `sources` (its imported id). Goal: the fusion beats the better single
method (`vektor`, `lexikalisch`) by ≥ 8 points at @10. Then filler chat is imported until
the pair holds 10 000 and 100 000 turns; at each size recall is measured again and the
search latency (the fused search including the query's embedding, every question several
times after one warm-up round): p50/p99, with the vector-only search as the baseline of the
same run. Goal: p99 ≤ 50 ms at 100 000 turns.

Embedders (`--embedders`): `scripted` is a hashed bag of words (texts connect only through
identical words), `local` the bundled all-MiniLM-L6-v2 (an English model; on German text it
is weak). The table names the embedder of each row. A measurement that failed is printed as
`null`/"failed", never as a number.

    .venv/bin/python bench/memory_recall.py [--embedders scripted,local]
        [--languages de,en,en-long,de-long]
        [--sizes 10000,100000] [--rounds 3] [--library-chunks N] [--http]
        [--keep | --workdir DIR]

Runs its own embedded PostgreSQL and Valkey under a fresh directory in /tmp per embedder.
Importing 100 000 turns builds two HNSW indexes and takes several minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import _recall_http
from _library_filler import add_library
from _machine import cpu_times, steal_percent
from _recall_data import NOW, Dataset, Query, build_dataset, filler_turns
from _recall_long import LANG as LONG_ENGLISH
from _recall_long import LANG_GERMAN as LONG_GERMAN
from _recall_long import LONG_SETS, build_long_dataset
from novaberg.config import load_settings
from novaberg.llm.factory import build_model_layer
from novaberg.memory.search.hybrid import search_memory
from novaberg.memory.search.results import ALL_METHODS, SearchOptions
from novaberg.pair import Pair
from novaberg.runtime.services import EmbeddedServices
from novaberg.store import characters
from novaberg.store.characters import NewCharacter
from novaberg.store.postgres import create_pool
from novaberg.store.redis_client import create_redis

GOAL_POINTS = 8.0
GOAL_P99_MS = 50.0
GOAL_SIZE = 100_000
"""Issue goals: fusion ≥ 8 recall points above the better single method at @10; p99 ≤ 50 ms
at 100 000 archived turns."""

USER = "leser"
MODES: dict[str, frozenset[str]] = {
    "vektor": frozenset({"vektor"}),
    "lexikalisch": frozenset({"lexikalisch"}),
    "vektor+kontext": frozenset({"vektor", "kontext"}),
    "lexikalisch+kontext+trigramm": frozenset({"lexikalisch", "kontext", "trigramm"}),
    "fusion ohne kontext": ALL_METHODS - {"kontext"},
    "fusion ohne zeitfenster": ALL_METHODS,
    "fusion ohne aktuell": ALL_METHODS,
    "fusion": ALL_METHODS,
}
UNNARROWED = "fusion ohne zeitfenster"
"""The plain fused search: every list, but a time expression in the question does not
narrow it (the baseline questions about time must not lose against)."""
LATEST_OFF = "fusion ohne aktuell"
"""Every list, but the newer statement of a changed fact does not move ahead of the older
one (memory/search/supersession.py): the before of that rule."""
SINGLE = ("vektor", "lexikalisch")
SHIPPED = "fusion"
LATENCY_BASELINE = "vektor"
KS = (5, 10)
ARCHIVE_TABLE = "gespraechsarchiv"
SLOWEST = 5
"""The slowest searches of each latency run are printed with their text (what the tail is)."""


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def emit(record: dict[str, Any]) -> None:
    print(json.dumps(record, ensure_ascii=False), flush=True)


def percentile(values: list[float], share: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(share * (len(ordered) - 1))))
    return ordered[index]


@dataclass
class Recall:
    hits: dict[int, int] = field(default_factory=lambda: dict.fromkeys(KS, 0))
    total: int = 0
    by_kind: dict[str, list[int]] = field(default_factory=lambda: defaultdict(lambda: [0, 0]))
    by_kind_at_5: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    """Per kind, the questions found among the first 5 (a changed fact's new value ranked
    above its old one shows here first)."""

    def add(self, kind: str, rank: int | None) -> None:
        self.total += 1
        for k in KS:
            if rank is not None and rank <= k:
                self.hits[k] += 1
        self.by_kind[kind][1] += 1
        if rank is not None and rank <= 10:
            self.by_kind[kind][0] += 1
        if rank is not None and rank <= 5:
            self.by_kind_at_5[kind] += 1

    def at(self, k: int) -> float | None:
        return round(100 * self.hits[k] / self.total, 1) if self.total else None


def cli_import(env: dict[str, str], path: Path, character: str) -> dict[str, Any]:
    """`novaberg import chat FILE --character C --user U --json` in a subprocess."""
    novaberg = Path(sys.executable).with_name("novaberg")
    command = [str(novaberg), "import", "chat", str(path), "--character", character]
    started = time.perf_counter()
    done = subprocess.run(
        [*command, "--user", USER, "--json"], env=env, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"import failed ({done.returncode}): {done.stderr.strip()[-500:]}")
    report = json.loads(done.stdout)
    report["sekunden"] = round(time.perf_counter() - started, 1)
    return report


def write_jsonl(path: Path, turns: list[dict[str, Any]]) -> None:
    with path.open("w", encoding="utf-8") as out:
        for turn in turns:
            out.write(json.dumps(turn, ensure_ascii=False) + "\n")


class Bench:
    def __init__(self, embedder: str, home: Path, rounds: int) -> None:
        self.embedder = embedder
        self.home = home
        self.rounds = rounds
        self.slowest: dict[str, list[tuple[float, str]]] = {}
        self.env = {
            **os.environ,
            "NOVABERG_HOME": str(home),
            "NOVABERG_LLM": "scripted",
            "NOVABERG_EMBED": embedder,
            "NOVABERG_PIXIE": "false",
            "NOVABERG_LOG_LEVEL": "WARNING",
        }
        self.settings = load_settings(home=home, llm="scripted", embed=embedder, pixie=False)
        self.services = EmbeddedServices(self.settings)

    async def __aenter__(self) -> Bench:
        endpoints = await asyncio.to_thread(self.services.start)
        self.pool = await create_pool(endpoints.database_url, max_size=8)
        self.redis = create_redis(endpoints.redis_url)
        self.model = build_model_layer(self.settings)
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.pool.close()
        await self.redis.aclose()
        close = getattr(self.model.embedder, "aclose", None)
        if close is not None:
            await close()
        await asyncio.to_thread(self.services.stop)

    async def turns(self, pair: Pair) -> int:
        """How many turns the pair's archive holds (a reused directory may hold more than
        the size asked for: the measurement names what it measured)."""
        async with self.pool.connection() as conn:
            cur = await conn.execute(
                "SELECT anzahl FROM archiv_paar WHERE user_id = %s AND character_id = %s",
                (pair.user_id, pair.character_id),
            )
            row = await cur.fetchone()
        return int(row["anzahl"]) if row else 0

    async def character(self, lang: str) -> str:
        character_id = f"bench-{lang}"
        async with self.pool.connection() as conn:  # exists already in a reused directory
            await characters.create(conn, USER, NewCharacter(character_id, f"Bench {lang}"))
        return character_id

    async def search(
        self,
        pair: Pair,
        query: Query,
        methods: frozenset[str],
        *,
        narrow: bool = True,
        latest: bool = True,
    ) -> Any:
        return await search_memory(
            self.redis,
            self.pool,
            self.model,
            pair,
            query.text,
            now=NOW,
            tz=self.settings.tz,
            options=SearchOptions(
                limit=10, methods=methods, narrow_by_time=narrow, latest_first=latest
            ),
        )

    async def recall(self, pair: Pair, queries: list[Query]) -> dict[str, Recall]:
        results: dict[str, Recall] = {}
        ranks: dict[str, dict[str, tuple[int | None, list[Any]]]] = {}
        for mode, methods in MODES.items():
            recall = Recall()
            for query in queries:
                found = await self.search(
                    pair, query, methods, narrow=mode != UNNARROWED, latest=mode != LATEST_OFF
                )
                rank = next(
                    (
                        position
                        for position, hit in enumerate(found.hits, start=1)
                        if any(s.source_id in query.evidence_ids for s in hit.sources)
                    ),
                    None,
                )
                recall.add(query.kind, rank)
                if mode in (LATEST_OFF, SHIPPED):
                    ranks.setdefault(query.text, {})[mode] = (rank, found.hits)
            results[mode] = recall
        for text, by_mode in ranks.items():  # what the latest-value rule changed, and how
            (before, _), (after, hits) = by_mode[LATEST_OFF], by_mode[SHIPPED]
            if before != after:
                emit(
                    {
                        "messung": "aktuell_geaendert",
                        "embedder": self.embedder,
                        "frage": text,
                        "rang_vorher": before,
                        "rang": after,
                        "treffer": [f"{h.text[:60]} {sorted(h.signals)}" for h in hits[:10]],
                    }
                )
        return results

    async def latency(self, pair: Pair, queries: list[Query], lang: str) -> dict[str, list[float]]:
        """Search times of the shipped fusion and of the vector-only baseline, interleaved
        (load that comes and goes hits both alike). Every timed search has a query text of
        its own (`latency_texts`): nothing is answered from a cache a repeated text would
        warm. The warm-up (the plain questions, as in the recall pass) fills the pool's
        connections and the plans."""
        for query in queries:
            await self.search(pair, query, MODES[SHIPPED])
            await self.search(pair, query, MODES[LATENCY_BASELINE])
        texts = latency_texts(lang, queries, 2 * self.rounds)
        samples: dict[str, list[float]] = {SHIPPED: [], LATENCY_BASELINE: []}
        self.slowest = {SHIPPED: [], LATENCY_BASELINE: []}
        for index, (fused, base) in enumerate(
            zip(texts[: len(texts) // 2], texts[len(texts) // 2 :], strict=True)
        ):
            runs = [(SHIPPED, fused), (LATENCY_BASELINE, base)]
            for mode, query in runs if index % 2 == 0 else runs[::-1]:
                started = time.perf_counter()
                await self.search(pair, query, MODES[mode])
                samples[mode].append((time.perf_counter() - started) * 1000)
                self.slowest[mode].append((samples[mode][-1], query.text))
        for mode in self.slowest:
            self.slowest[mode] = sorted(self.slowest[mode], reverse=True)[:SLOWEST]
        return samples

    async def drop_vector_indexes(self) -> list[str]:
        """Drop the archive's HNSW indexes; their definitions (from the catalog, so exactly
        what the migrations made) to build them again after a bulk load."""
        async with self.pool.connection() as conn:
            cur = await conn.execute(
                "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = %s"
                " AND indexdef LIKE %s ORDER BY indexname",
                (ARCHIVE_TABLE, "%USING hnsw%"),
            )
            found = [(row["indexname"], row["indexdef"]) for row in await cur.fetchall()]
            for name, _ in found:
                await conn.execute(f'DROP INDEX "{name}"')
        return [definition for _, definition in found]

    async def build_indexes(self, definitions: list[str]) -> float:
        """CREATE INDEX from the catalog's definitions (a bulk build, as a fresh restore
        would), then VACUUM ANALYZE: the one-off vacuum autovacuum would start after a bulk
        load must not run during the measurement (a serving archive grows by a few rows a
        turn). Seconds taken."""
        started = time.perf_counter()
        async with self.pool.connection() as conn:
            await conn.set_autocommit(True)
            try:
                await conn.execute("SET maintenance_work_mem = '1GB'")
                for definition in definitions:
                    await conn.execute(definition)
                await conn.execute("RESET maintenance_work_mem")
                await conn.execute(f"VACUUM (ANALYZE) {ARCHIVE_TABLE}")
            finally:
                await conn.set_autocommit(False)
        return round(time.perf_counter() - started, 1)


LEAD_INS: dict[str, tuple[str, ...]] = {
    "de": ("sag mal: ", "weißt du noch: ", "kurz gefragt: ", "ach ja: ", "übrigens: ",
           "noch eins: ", "und: ", "eine frage: "),
    "en": ("say: ", "do you remember: ", "quick one: ", "oh right: ", "by the way: ",
           "one more: ", "and: ", "a question: "),
}  # fmt: skip
"""Lowercase lead-ins (never taken for names) that make each timed query text unique."""

FILLER_LANGUAGE: dict[str, str] = {LONG_ENGLISH: "en", LONG_GERMAN: "de"}
"""The language of a data set's lead-ins and filler chat, where its name is not one."""


def latency_texts(lang: str, queries: list[Query], rounds: int) -> list[Query]:
    """`rounds` × the questions, each round with its own lead-in: no text repeats (nor
    repeats the recall pass's plain question)."""
    lead_ins = LEAD_INS[FILLER_LANGUAGE.get(lang, lang)]
    if rounds > len(lead_ins):
        raise ValueError(f"at most {len(lead_ins) // 2} latency rounds (one lead-in each)")
    return [
        Query(query.kind, query.way, lead_ins[r] + query.text, query.evidence, query.more)
        for r in range(rounds)
        for query in queries
    ]


def latency_summary(samples: list[float]) -> dict[str, Any]:
    return {
        "p50_ms": round(statistics.median(samples), 2) if samples else None,
        "p90_ms": round(percentile(samples, 0.90) or 0.0, 2) if samples else None,
        "p99_ms": round(percentile(samples, 0.99) or 0.0, 2) if samples else None,
        "n": len(samples),
    }


def report_recall(embedder: str, lang: str, size: int, results: dict[str, Recall]) -> dict:
    rows = {}
    for mode, recall in results.items():
        rows[mode] = {"@5": recall.at(5), "@10": recall.at(10)}
        emit(
            {
                "messung": "recall",
                "embedder": embedder,
                "sprache": lang,
                "turns": size,
                "modus": mode,
                "recall_at_5": recall.at(5),
                "recall_at_10": recall.at(10),
                "fragen": recall.total,
                "je_art_at_10": {
                    kind: round(100 * hit / total, 1)
                    for kind, (hit, total) in sorted(recall.by_kind.items())
                },
                "je_art_at_5": {
                    kind: round(100 * recall.by_kind_at_5[kind] / total, 1)
                    for kind, (_, total) in sorted(recall.by_kind.items())
                },
            }
        )
    best_single = max((rows[m]["@10"] or 0.0) for m in SINGLE)
    fused = rows[SHIPPED]["@10"]
    gain = None if fused is None else round(fused - best_single, 1)
    emit(
        {
            "messung": "ziel_recall",
            "embedder": embedder,
            "sprache": lang,
            "turns": size,
            "fusion_at_10": fused,
            "beste_einzelmethode_at_10": best_single,
            "vorsprung_punkte": gain,
            "ziel_punkte": GOAL_POINTS,
            "erreicht": gain is not None and gain >= GOAL_POINTS,
        }
    )
    kinds = {
        f"{mode} / {kind}": round(100 * hit / total, 1)
        for mode in (UNNARROWED, LATEST_OFF, SHIPPED)
        for kind, (hit, total) in sorted(results[mode].by_kind.items())
    }
    return {"rows": rows, "gain": gain, "kinds": kinds}


async def run_embedder(args: argparse.Namespace, embedder: str, workdir: Path) -> list[dict]:
    summary: list[dict] = []
    home = workdir / embedder
    home.mkdir(parents=True, exist_ok=True)
    async with Bench(embedder, home, args.rounds) as bench:
        pairs: dict[str, Pair] = {}
        datasets: dict[str, Dataset] = {}
        for lang in args.languages:
            dataset = build_long_dataset(lang) if lang in LONG_SETS else build_dataset(lang)
            datasets[lang] = dataset
            character = await bench.character(lang)
            pairs[lang] = Pair(USER, character)
            path = workdir / f"verlauf-{lang}.jsonl"
            write_jsonl(path, dataset.turns)
            log(f"[{embedder}] import {len(dataset.turns)} {lang} turns ...")
            report = await asyncio.to_thread(cli_import, bench.env, path, character)
            emit({"messung": "import", "embedder": embedder, "sprache": lang, **report})
            held = await bench.turns(pairs[lang])
            results = await bench.recall(pairs[lang], dataset.queries)
            outcome = report_recall(embedder, lang, held, results)
            if args.http:
                outcome["http"] = await http_report(
                    bench, embedder, lang, held, pairs[lang], dataset
                )
            summary.append({"embedder": embedder, "sprache": lang, "turns": held, **outcome})
        lang = args.languages[0]
        if args.library_chunks:
            folder = workdir / f"bibliothek-{FILLER_LANGUAGE.get(lang, lang)}-{args.library_chunks}"
            log(f"[{embedder}] {args.library_chunks} library passages: novaberg library add ...")
            added = await add_library(
                bench, folder, FILLER_LANGUAGE.get(lang, lang), args.library_chunks, USER
            )
            emit({"messung": "bibliothek", "embedder": embedder, **added})
        present = len(datasets[lang].turns)
        for size in args.sizes:
            present = max(present, await bench.turns(pairs[lang]))
            missing = size - present
            if missing > 0:
                path = workdir / f"fueller-{lang}-{size}.jsonl"
                filler = filler_turns(
                    FILLER_LANGUAGE.get(lang, lang), missing, seed=size, prefix=f"f{size}"
                )
                write_jsonl(path, filler)
                definitions = await bench.drop_vector_indexes() if args.rebuild_indexes else []
                log(
                    f"[{embedder}] import {missing} filler turns up to {size}"
                    f"{' (HNSW indexes dropped, rebuilt after)' if definitions else ''} ..."
                )
                report = await asyncio.to_thread(
                    cli_import, bench.env, path, pairs[lang].character_id
                )
                if definitions:
                    report["hnsw_neu_gebaut_sekunden"] = await bench.build_indexes(definitions)
                emit({"messung": "import", "embedder": embedder, "sprache": lang, **report})
                present = size
            held = await bench.turns(pairs[lang])
            if held > size:
                log(f"[{embedder}] the archive holds {held} turns already; measured at {held}")
            size = held
            results = await bench.recall(pairs[lang], datasets[lang].queries)
            outcome = report_recall(embedder, lang, size, results)
            before = cpu_times()
            log(f"[{embedder}] latency {SHIPPED} and {LATENCY_BASELINE} at {size} ...")
            measured = await bench.latency(pairs[lang], datasets[lang].queries, lang)
            timings = {mode: latency_summary(samples) for mode, samples in measured.items()}
            for mode, slowest in bench.slowest.items():
                timings[mode]["langsamste"] = [[round(ms, 1), text] for ms, text in slowest]
            steal = steal_percent(before, cpu_times())
            shipped, base = timings[SHIPPED], timings[LATENCY_BASELINE]
            ratio = (
                round(shipped["p50_ms"] / base["p50_ms"], 2)
                if shipped["p50_ms"] and base["p50_ms"]
                else None
            )
            load = round(os.getloadavg()[0], 1)
            emit(
                {
                    "messung": "latenz",
                    "embedder": embedder,
                    "sprache": lang,
                    "turns": size,
                    "fusion": shipped,
                    "baseline_vektor": base,
                    "verhaeltnis_p50": ratio,
                    "cpu_steal_prozent": steal,
                    "last_1min": load,
                    "ziel_p99_ms": GOAL_P99_MS if size >= GOAL_SIZE else None,
                    "erreicht": (shipped["p99_ms"] is not None and shipped["p99_ms"] <= GOAL_P99_MS)
                    if size >= GOAL_SIZE
                    else None,
                }
            )
            if args.http:
                outcome["http"] = await http_report(
                    bench, embedder, lang, size, pairs[lang], datasets[lang], timed=True
                )
            summary.append(
                {
                    "embedder": embedder,
                    "sprache": lang,
                    "turns": size,
                    **outcome,
                    "latency": timings,
                    "load": load,
                }
            )
    return summary


async def http_report(
    bench: Bench,
    embedder: str,
    lang: str,
    size: int,
    pair: Pair,
    dataset: Dataset,
    *,
    timed: bool = False,
) -> dict[str, Any]:
    """`--http` (bench/_recall_http.py): recall through the endpoint, `timed` also latency."""
    texts = latency_texts(lang, dataset.queries, 2 * bench.rounds) if timed else []
    record = await _recall_http.report(
        bench, pair, dataset.queries, texts, NOW, Recall(), latency_summary
    )
    emit({"messung": "http", "embedder": embedder, "sprache": lang, "turns": size, **record})
    return record


def print_table(summary: list[dict]) -> None:
    modes = list(MODES)
    print()
    header = f"{'embedder':9} {'lang':4} {'turns':>7}  " + "  ".join(f"{m[:20]:>20}" for m in modes)
    print("evidence recall @5 / @10 (%)")
    print(header)
    for row in summary:
        cells = "  ".join(
            f"{_cell(row['rows'][m]['@5'])} / {_cell(row['rows'][m]['@10'])}".rjust(20)
            for m in modes
        )
        print(
            f"{row['embedder']:9} {row['sprache']:4} {row['turns']:>7}  {cells}   Δ@10 fusion−best single: {row['gain']}"
        )
    print("\nsearch latency, fused (vector-only baseline), ms")
    for row in summary:
        if "latency" not in row:
            continue
        f, b = row["latency"][SHIPPED], row["latency"][LATENCY_BASELINE]
        print(
            f"{row['embedder']:9} {row['sprache']:4} {row['turns']:>7}  p50 {f['p50_ms']} ({b['p50_ms']})"
            f"  p90 {f['p90_ms']} ({b['p90_ms']})  p99 {f['p99_ms']} ({b['p99_ms']})  n={f['n']}"
            f"  load {row.get('load')}"
        )
    _recall_http.print_rows(summary, _cell)


def print_side_by_side(summary: list[dict]) -> None:
    """Recall@10 per mode, one column per data set (language) of each embedder, at the size
    each was imported at (the first row of each): the languages compared in one glance."""
    first: dict[tuple[str, str], dict] = {}
    for row in summary:
        first.setdefault((row["embedder"], row["sprache"]), row)
    if not first:
        return
    columns = list(first)
    for at in ("@10", "@5"):
        print(f"\nrecall{at} (%) side by side, per language (data set as imported)")
        print(f"{'mode':40} " + " ".join(f"{e[:8] + ' ' + lang:>18}" for e, lang in columns))
        for mode in MODES:
            cells = " ".join(f"{_cell(first[c]['rows'][mode][at]):>18}" for c in columns)
            print(f"{mode:40} {cells}")
    print(
        "per kind of question, @10 (the shipped fusion, the same without its time window,"
        " without the latest value first)"
    )
    kinds = sorted(
        {k for row in first.values() for k in row.get("kinds", {})},
        key=lambda name: (name.split(" / ")[1], name),
    )
    for kind in kinds:
        cells = " ".join(
            f"{_cell(first[c].get('kinds', {}).get(kind)) if kind in first[c].get('kinds', {}) else '-':>18}"
            for c in columns
        )
        print(f"{kind:40} {cells}")


def _cell(value: float | None) -> str:
    return "failed" if value is None else f"{value:5.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--embedders", default="scripted,local")
    parser.add_argument(
        "--languages",
        default=f"de,en,{LONG_ENGLISH},{LONG_GERMAN}",
        help=f"data sets: de, en (parallel everyday chat), {LONG_ENGLISH}, {LONG_GERMAN}"
        " (a named group chat, English and German)",
    )
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument(
        "--rounds", type=int, default=3, help="timed rounds per question (at most 4)"
    )
    parser.add_argument(
        "--rebuild-indexes",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="load filler with the archive's HNSW indexes dropped and build them after "
        "(default; --no-rebuild-indexes: every row into the live indexes, far slower)",
    )
    parser.add_argument(
        "--library-chunks",
        type=int,
        default=0,
        help="index this many library passages of the searched person (novaberg library "
        "add) before the sized measurements",
    )
    parser.add_argument(
        "--http",
        action="store_true",
        help="also ask every question through GET /memory/{c}/search (in-process ASGI) and "
        "time it beside the in-process search",
    )
    parser.add_argument("--keep", action="store_true", help="keep the working directory")
    parser.add_argument(
        "--workdir",
        type=Path,
        help="use (and keep) this directory; the imports of an earlier run there are found "
        "stored (the import is idempotent), so only the measurements run again",
    )
    args = parser.parse_args()
    args.languages = [x for x in args.languages.split(",") if x]
    args.sizes = [int(x) for x in args.sizes.split(",") if x]
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="novaberg-bench-recall-"))
    workdir.mkdir(parents=True, exist_ok=True)
    args.keep = args.keep or args.workdir is not None
    log(f"working in {workdir}")
    summary: list[dict] = []
    try:
        for embedder in args.embedders.split(","):
            try:
                summary += asyncio.run(run_embedder(args, embedder, workdir))
            except Exception as exc:  # a failed embedder is reported, the others still run
                emit(
                    {
                        "messung": "fehler",
                        "embedder": embedder,
                        "fehler": f"{type(exc).__name__}: {exc}",
                    }
                )
                log(f"[{embedder}] failed: {exc}")
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    print_table(summary)
    print_side_by_side(summary)


if __name__ == "__main__":
    main()
