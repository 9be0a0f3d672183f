"""Embedded services: start, reuse, stop, restart with data kept, stale pid recovery."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest
import redis

from novaberg.config import load_settings
from novaberg.runtime.embedded_postgres import EmbeddedPostgres, shared_buffers_for
from novaberg.runtime.embedded_redis import EmbeddedRedis
from novaberg.runtime.services import EmbeddedServices
from novaberg.store.migrate import core_migrations, migrate


def _redis(url: str) -> redis.Redis:
    return redis.Redis.from_url(url, decode_responses=True)


def test_restart_keeps_data(tmp_path: Path) -> None:
    settings = load_settings(home=tmp_path, llm="scripted")
    with EmbeddedServices(settings) as first:
        _redis(first.redis_url).set("bleibt", "ja")
        with psycopg.connect(first.database_url, autocommit=True) as conn:
            conn.execute("INSERT INTO users (user_id) VALUES ('anna')")
    assert not EmbeddedRedis(tmp_path / "redis").is_running()
    assert not EmbeddedPostgres(tmp_path / "postgres").is_running()
    with EmbeddedServices(settings) as second:
        assert _redis(second.redis_url).get("bleibt") == "ja"
        with psycopg.connect(second.database_url) as conn:
            assert conn.execute("SELECT user_id FROM users").fetchall() == [("anna",)]


def test_the_last_process_to_stop_stops_the_servers(tmp_path: Path) -> None:
    """`novaberg api` and `novaberg worker` on one home: whichever stops first leaves the
    servers to the other; the last one stops them, even if it did not start them."""
    settings = load_settings(home=tmp_path, llm="scripted")
    starter, guest = EmbeddedServices(settings), EmbeddedServices(settings)
    urls = starter.start()
    try:
        assert guest.start() == urls
        starter.stop()
        assert _redis(urls.redis_url).ping()  # still there for the guest
        with psycopg.connect(urls.database_url) as conn:
            assert conn.execute("SELECT 1").fetchone() == (1,)
    finally:
        guest.stop()
    assert not EmbeddedRedis(tmp_path / "redis").is_running()
    assert not EmbeddedPostgres(tmp_path / "postgres").is_running()


def test_a_killed_users_registration_does_not_keep_the_servers(tmp_path: Path) -> None:
    settings = load_settings(home=tmp_path, llm="scripted")
    services = EmbeddedServices(settings)
    services.start()
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (tmp_path / "embedded-users" / f"{dead.pid}-killed").touch()  # never left
    services.stop()
    assert not EmbeddedRedis(tmp_path / "redis").is_running()
    assert not EmbeddedPostgres(tmp_path / "postgres").is_running()


def test_second_start_reuses_running_server(tmp_path: Path) -> None:
    owner = EmbeddedRedis(tmp_path / "redis")
    url = owner.start()
    try:
        guest = EmbeddedRedis(tmp_path / "redis")
        assert guest.start() == url
        assert owner.started_here and not guest.started_here
        guest_pg_owner = EmbeddedPostgres(tmp_path / "pg")
        guest_pg_owner.start()
        reuse = EmbeddedPostgres(tmp_path / "pg")
        reuse.start()
        assert guest_pg_owner.started_here and not reuse.started_here
        guest_pg_owner.stop()
    finally:
        owner.stop()


def test_stale_redis_pid_is_recovered(tmp_path: Path) -> None:
    server = EmbeddedRedis(tmp_path / "redis")
    server.start()
    pid = server.read_pid()
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    while EmbeddedRedis(tmp_path / "redis").ping():
        time.sleep(0.05)
    assert server.pid_file.exists()
    again = EmbeddedRedis(tmp_path / "redis")
    again.start()
    try:
        assert again.started_here and again.read_pid() != pid
        assert _redis(again.url).ping()
    finally:
        again.stop()


def test_stale_postgres_pid_is_recovered(tmp_path: Path) -> None:
    server = EmbeddedPostgres(tmp_path / "pg")
    server.start()
    pid_line = (tmp_path / "pg" / "postmaster.pid").read_text().splitlines()[0]
    os.kill(int(pid_line), signal.SIGKILL)
    deadline = time.monotonic() + 10
    while server.is_running() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert (tmp_path / "pg" / "postmaster.pid").exists()
    again = EmbeddedPostgres(tmp_path / "pg")
    url = again.start()
    try:
        with psycopg.connect(url) as conn:
            assert conn.execute("SELECT 1").fetchone() == (1,)
    finally:
        again.stop()


def test_postgres_pid_taken_by_another_process_is_recovered(tmp_path: Path) -> None:
    """After a reboot the old postmaster's pid may belong to some other live process."""
    server = EmbeddedPostgres(tmp_path / "pg")
    server.start()
    pid_file = tmp_path / "pg" / "postmaster.pid"
    lines = pid_file.read_text().splitlines()
    os.kill(int(lines[0]), signal.SIGKILL)
    deadline = time.monotonic() + 10
    while server.is_running() and time.monotonic() < deadline:
        time.sleep(0.1)
    stranger = subprocess.Popen(["sleep", "60"])
    try:
        pid_file.write_text("\n".join([str(stranger.pid), *lines[1:]]) + "\n")
        assert not EmbeddedPostgres(tmp_path / "pg").is_running()
        again = EmbeddedPostgres(tmp_path / "pg")
        url = again.start()
        try:
            assert again.started_here
            with psycopg.connect(url) as conn:
                assert conn.execute("SELECT 1").fetchone() == (1,)
        finally:
            again.stop()
    finally:
        stranger.kill()
        stranger.wait()


def test_migrations_are_idempotent(endpoints) -> None:  # type: ignore[no-untyped-def]
    assert migrate(endpoints.database_url, 384) == []
    with psycopg.connect(endpoints.database_url) as conn:
        names = [r[0] for r in conn.execute("SELECT name FROM schema_migrations ORDER BY name")]
        tables = {
            r[0] for r in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname='public'")
        }
        ext = {r[0] for r in conn.execute("SELECT extname FROM pg_extension")}
    assert names == sorted(m.name for m in core_migrations())
    assert {"vector", "pg_trgm"} <= ext
    for table in (
        "users",
        "api_tokens",
        "characters",
        "charakter_hash",
        "charakter_anweisungen",
        "direktiven",
        "lzg_knoten",
        "lzg_kanten",
        "ziele",
        "notizen",
        "timeline",
        "pending_writes_log",
        "pipeline_log",
    ):
        assert table in tables


def test_dimension_mismatch_is_reported(endpoints) -> None:  # type: ignore[no-untyped-def]
    from novaberg.store.migrate import SchemaDimensionMismatch

    with pytest.raises(SchemaDimensionMismatch, match="NOVABERG_EMBED_DIM"):
        migrate(endpoints.database_url, 768)


def _shared_buffers(url: str) -> int:
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT pg_size_bytes(current_setting('shared_buffers'))")
        return int(row.fetchone()[0])  # type: ignore[index]


def test_shared_buffers_are_applied_with_one_restart(tmp_path: Path) -> None:
    server = EmbeddedPostgres(tmp_path / "pg", shared_buffers="256MB")
    url = server.start()
    try:
        assert _shared_buffers(url) == 256 * 1024 * 1024
        assert server.started_here
    finally:
        server.stop()
    back_to_default = EmbeddedPostgres(tmp_path / "pg", shared_buffers=None)
    url = back_to_default.start()  # NOVABERG_POSTGRES_SHARED_BUFFERS=default after auto
    try:
        assert _shared_buffers(url) == 128 * 1024 * 1024
    finally:
        back_to_default.stop()


def test_shared_buffers_setting_is_resolved() -> None:
    assert shared_buffers_for("default") is None
    assert shared_buffers_for("3GB") == "3GB"
    auto = shared_buffers_for("auto")
    assert auto is not None and auto.endswith("MB")
    assert 128 <= int(auto.removesuffix("MB")) <= 8192


def test_a_valkey_that_cannot_start_says_why(tmp_path: Path) -> None:
    (tmp_path / "redis" / "valkey.log").mkdir(parents=True)  # it cannot open its log
    with pytest.raises(RuntimeError, match="Can't open the log file"):
        EmbeddedRedis(tmp_path / "redis").start()
