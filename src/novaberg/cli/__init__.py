"""The `novaberg` command, one module per command family: `app` (serve, api, worker, user,
doctor, version and the wiring of the others), `chat`, `imports`, `memory`, `pixie`,
`tokens`, `turn`."""

from novaberg.cli.app import app, main

__all__ = ["app", "main"]
