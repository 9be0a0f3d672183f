"""`python -m novaberg.cli …`: the `novaberg` command (what the test and bench processes run)."""

from novaberg.cli.app import main

main()
