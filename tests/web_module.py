"""Run one of the page's ES modules (src/novaberg/web/) under node and read what it wrote.

The page has no build step, so its pure functions (markdown, greetings, catalogues) are
tested by importing the very file the browser loads. One runner, so every such test finds
node, imports and times out the same way. `tests/` is on the import path through its
conftest."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

WEB = Path(__file__).resolve().parents[1] / "src" / "novaberg" / "web"
NODE = shutil.which("node")


def run_module(name: str, expression: str) -> str:
    """Import `web/<name>` as `m` and return what `expression` (JavaScript over `m`)
    evaluates to, written as a string by node."""
    assert NODE, "node is needed for the page's script tests (it comes with npm)"
    script = (
        f"import({json.dumps((WEB / name).as_uri())})"
        f".then(m => process.stdout.write(String({expression})))"
    )
    done = subprocess.run(
        [NODE, "--input-type=module", "-e", script],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return done.stdout
