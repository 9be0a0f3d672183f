"""A person's data as one archive: export it from one installation, restore it in another.

The archive's format is documented in docs/export.md; `tables` says which PostgreSQL
tables travel (and which stay, and why), `redis_state` which Redis key families,
`archive_format` how they are laid out in the zip, `export`/`restore` run them.
"""
