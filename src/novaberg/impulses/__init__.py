"""What Nova says on her own, in one package: the impulse stack and the shadow queue (what
she might say and what she still means to do), the person's impulse settings (quiet hours,
silence), the gates an impulse must pass, its delivery as an event, the background jobs
that fill the stack, and the HTTP routes that show and change all of it.

The modules sit at different layers (pyproject's import-linter contract): `stack`,
`settings` and `shadow_queue` store (beside `novaberg.store`), `gates`, `delivery` and
`jobs` decide and act (beside `events` and `pixie`), `routes` serves (beside `api`).
docs/behaviour/pixie.md describes the behaviour."""
