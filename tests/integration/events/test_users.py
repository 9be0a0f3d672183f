"""`novaberg user add NAME` prints a token once and stores only its hash."""

from __future__ import annotations

import hashlib
import uuid

import psycopg
import pytest
from typer.testing import CliRunner

from novaberg.cli import app
from novaberg.config import Settings
from novaberg.runtime.services import Endpoints


@pytest.fixture
def cli_env(settings: Settings, endpoints: Endpoints) -> dict[str, str]:
    return {
        "NOVABERG_HOME": str(settings.home),
        "NOVABERG_REDIS_URL": endpoints.redis_url,
        "NOVABERG_DATABASE_URL": endpoints.database_url,
        "NOVABERG_LLM": "scripted",
        "NOVABERG_EMBED_DIM": "384",
    }


def test_user_add_prints_a_token_stored_hashed(
    cli_env: dict[str, str], endpoints: Endpoints
) -> None:
    name = f"carla-{uuid.uuid4().hex[:6]}"
    result = CliRunner().invoke(app, ["user", "add", name], env=cli_env)
    assert result.exit_code == 0, result.output
    token = result.stdout.strip().splitlines()[-1]
    assert token.startswith("nvb_") and len(token) > 40
    with psycopg.connect(endpoints.database_url) as conn:
        rows = conn.execute(
            "SELECT token_hash FROM api_tokens WHERE user_id = %s", (name,)
        ).fetchall()
    assert rows == [(hashlib.sha256(token.encode()).hexdigest(),)], "only the hash is stored"

    second = CliRunner().invoke(app, ["user", "add", name], env=cli_env)
    assert second.exit_code == 0
    assert second.stdout.strip().splitlines()[-1] != token, "a second token, same user"


@pytest.mark.parametrize("name", ["anna:nova", "anna\n", "an na", ""])
def test_user_add_rejects_ids_that_break_keys(cli_env: dict[str, str], name: str) -> None:
    result = CliRunner().invoke(app, ["user", "add", name], env=cli_env)
    assert result.exit_code == 2
    assert "invalid user id" in result.output


async def test_page_token_follows_the_default_user(settings: Settings, db, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The token kept on disk survives restarts, but not a change of NOVABERG_DEFAULT_USER:
    the page must log in as the user the setting names."""
    from types import SimpleNamespace

    from novaberg.api.chat import local_page_token
    from novaberg.store.users import user_for_token

    def ctx(user: str) -> SimpleNamespace:
        return SimpleNamespace(
            settings=settings.model_copy(update={"home": tmp_path, "default_user": user}), pool=db
        )

    first = await local_page_token(ctx("anna"))  # type: ignore[arg-type]
    assert await local_page_token(ctx("anna")) == first  # type: ignore[arg-type]
    changed = await local_page_token(ctx("berta"))  # type: ignore[arg-type]
    assert changed != first
    assert await user_for_token(db, changed) == "berta"
    assert await local_page_token(ctx("berta")) == changed  # type: ignore[arg-type]


def _issue(cli_env: dict[str, str], name: str, label: str) -> str:
    result = CliRunner().invoke(app, ["user", "add", name, "--label", label], env=cli_env)
    assert result.exit_code == 0, result.output
    return str(result.stdout.strip().splitlines()[-1])


def test_user_tokens_and_revoke(cli_env: dict[str, str]) -> None:
    """`user tokens` shows ids and labels (never a token); `user revoke` says how many tokens
    of which users went, never the token; nothing matched is one line and exit code 1."""
    anna, berta = (f"{n}-{uuid.uuid4().hex[:6]}" for n in ("anna", "berta"))
    laptop = _issue(cli_env, anna, "laptop")
    _issue(cli_env, anna, "handy")
    bertas = _issue(cli_env, berta, "laptop")
    label = f"weg-{uuid.uuid4().hex[:6]}"
    _issue(cli_env, anna, label)
    _issue(cli_env, berta, label)

    listed = CliRunner().invoke(app, ["user", "tokens", anna], env=cli_env)
    assert listed.exit_code == 0, listed.output
    assert "laptop" in listed.stdout and "handy" in listed.stdout
    assert laptop not in listed.stdout and hashlib.sha256(laptop.encode()).hexdigest()[:12] not in (
        listed.stdout
    )

    by_token = CliRunner().invoke(app, ["user", "revoke", "-"], env=cli_env, input=laptop + "\n")
    assert by_token.exit_code == 0, by_token.output
    assert by_token.stdout.strip() == f"revoked 1 token: {anna} (1)"
    assert laptop not in by_token.output
    assert "laptop" not in CliRunner().invoke(app, ["user", "tokens", anna], env=cli_env).stdout

    by_label = CliRunner().invoke(app, ["user", "revoke", "--label", label], env=cli_env)
    assert by_label.exit_code == 0, by_label.output
    assert by_label.stdout.strip() == f"revoked 2 tokens: {anna} (1), {berta} (1)"

    narrowed = CliRunner().invoke(
        app, ["user", "revoke", "--label", "laptop", "--user", anna], env=cli_env
    )
    assert narrowed.exit_code == 1, "anna's laptop token is already gone"
    assert narrowed.output.strip() == "no token matched; nothing revoked"

    everything = CliRunner().invoke(app, ["user", "revoke", "--all", anna], env=cli_env)
    assert everything.exit_code == 0, everything.output
    assert everything.stdout.strip() == f"revoked 1 token: {anna} (1)"
    again = CliRunner().invoke(app, ["user", "revoke", laptop], env=cli_env)
    assert again.exit_code == 1 and laptop not in again.output
    assert bertas not in everything.output
    bertas_left = CliRunner().invoke(app, ["user", "tokens", berta], env=cli_env)
    assert "laptop" in bertas_left.stdout, "another user's tokens stay"


def test_revoke_without_redis_still_deletes(cli_env: dict[str, str]) -> None:
    """Redis unreachable: the rows are deleted all the same, and the command says that
    running servers notice within their cache's lifetime."""
    name = f"carla-{uuid.uuid4().hex[:6]}"
    _issue(cli_env, name, "laptop")
    no_redis = {**cli_env, "NOVABERG_REDIS_URL": "redis://127.0.0.1:9/0"}
    result = CliRunner().invoke(app, ["user", "revoke", "--all", name], env=no_redis)
    assert result.exit_code == 0, result.output
    assert f"revoked 1 token: {name} (1)" in result.stdout
    assert "Redis unreachable: running servers refuse these tokens within 30 s" in result.output
    left = CliRunner().invoke(app, ["user", "tokens", name], env=cli_env)
    assert "laptop" not in left.stdout
