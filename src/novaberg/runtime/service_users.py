"""Which processes use the embedded servers of one `NOVABERG_HOME`.

Several processes may share them (`novaberg api` beside `novaberg worker`, a `novaberg
turn` while `make serve` runs). Each registers a file `{pid}-{id}` under
`embedded-users/`; the servers are started and stopped under one file lock, and the last
user to leave stops them, whoever started them. A user that died without leaving (its pid
is gone) does not count, so servers orphaned by a killed process are stopped by the next
process that uses them and exits.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import uuid
from collections.abc import Iterator
from pathlib import Path

from novaberg.runtime.pids import pid_alive


class ServiceUsers:
    def __init__(self, home: Path) -> None:
        self.directory = home / "embedded-users"
        self.lock_path = home / "embedded.lock"

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """One process at a time decides to start or stop the servers."""
        self.lock_path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.lock_path, os.O_CREAT | os.O_RDWR, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    def join(self, *, fresh: bool) -> Path:
        """Register this user; `fresh` (the servers were just started) forgets every
        earlier registration, which can only be left over from before."""
        self.directory.mkdir(parents=True, exist_ok=True)
        if fresh:
            for stale in self.directory.iterdir():
                stale.unlink(missing_ok=True)
        me = self.directory / f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
        me.touch()
        return me

    def leave(self, me: Path | None) -> int:
        """Unregister; return how many other live users remain."""
        if me is not None:
            me.unlink(missing_ok=True)
        return self.others()

    def others(self) -> int:
        """Live registered users (files of dead processes are removed on the way)."""
        if not self.directory.is_dir():
            return 0
        alive = 0
        for entry in self.directory.iterdir():
            pid = entry.name.partition("-")[0]
            if pid.isdigit() and pid_alive(int(pid)):
                alive += 1
            else:
                entry.unlink(missing_ok=True)
        return alive
