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
