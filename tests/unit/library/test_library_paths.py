"""Nothing outside an approved folder is read: links out, `..`, absolute paths, devices,
sockets and FIFOs are refused by the one function that opens files, and left out by the
walk. A FIFO whose read would block forever makes a regression hang (the test timeout)
instead of passing."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from novaberg.memory.library.paths import PathRefused, read_inside, resolve_root, walk

LIMIT = 1024 * 1024


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, Path]:
    """An approved folder and, beside it, a secret one it must never reach."""
    root = tmp_path / "notes"
    secret = tmp_path / "secret"
    root.mkdir()
    secret.mkdir()
    (secret / "password.txt").write_text("hunter2")
    (root / "ok.md").write_text("# Fine\nhello")
    (root / "sub").mkdir()
    (root / "sub" / "deep.txt").write_text("deep")
    return resolve_root(root), secret


def test_a_file_inside_is_read(tree: tuple[Path, Path]) -> None:
    root, _ = tree
    assert read_inside(root, "ok.md", LIMIT) == b"# Fine\nhello"
    assert read_inside(root, "sub/deep.txt", LIMIT) == b"deep"


def test_dotdot_and_absolute_paths_are_refused(tree: tuple[Path, Path]) -> None:
    root, secret = tree
    for bad in ("../secret/password.txt", "sub/../../secret/password.txt", "..", ""):
        with pytest.raises(PathRefused):
            read_inside(root, bad, LIMIT)
    with pytest.raises(PathRefused):
        read_inside(root, str(secret / "password.txt"), LIMIT)


def test_a_link_out_of_the_folder_is_refused_and_not_walked(tree: tuple[Path, Path]) -> None:
    root, secret = tree
    (root / "leak.txt").symlink_to(secret / "password.txt")
    (root / "leakdir").symlink_to(secret, target_is_directory=True)
    with pytest.raises(PathRefused, match="outside"):
        read_inside(root, "leak.txt", LIMIT)
    with pytest.raises(PathRefused, match="outside"):
        read_inside(root, "leakdir/password.txt", LIMIT)
    listed = {info.relative for info in walk(root)}
    assert listed == {"ok.md", "sub/deep.txt"}


def test_a_link_inside_the_folder_is_allowed(tree: tuple[Path, Path]) -> None:
    root, _ = tree
    (root / "alias.md").symlink_to(root / "ok.md")
    assert read_inside(root, "alias.md", LIMIT) == b"# Fine\nhello"
    assert "alias.md" in {info.relative for info in walk(root)}


def test_a_fifo_is_refused_without_being_opened(tree: tuple[Path, Path]) -> None:
    root, _ = tree
    os.mkfifo(root / "pipe.txt")  # opening it for reading without a writer would block
    with pytest.raises(PathRefused, match="not a regular file"):
        read_inside(root, "pipe.txt", LIMIT)
    assert "pipe.txt" not in {info.relative for info in walk(root)}


def test_a_socket_is_refused(tree: tuple[Path, Path]) -> None:
    root, _ = tree
    path = root / "s.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        server.bind(str(path))
        with pytest.raises(PathRefused, match="not a regular file"):
            read_inside(root, "s.sock", LIMIT)
        assert "s.sock" not in {info.relative for info in walk(root)}
    finally:
        server.close()


def test_a_device_file_is_refused(tree: tuple[Path, Path]) -> None:
    root, _ = tree
    (root / "zero").symlink_to("/dev/zero")  # a device reached through a link: outside
    with pytest.raises(PathRefused):
        read_inside(root, "zero", LIMIT)
    # a device node in the folder itself (needs no privileges to test: /dev as the root)
    dev = resolve_root("/dev")
    with pytest.raises(PathRefused, match="not a regular file"):
        read_inside(dev, "null", LIMIT)


def test_a_file_over_the_limit_is_refused(tree: tuple[Path, Path]) -> None:
    root, _ = tree
    (root / "big.txt").write_bytes(b"x" * 2048)
    with pytest.raises(PathRefused, match="larger than 1024 bytes"):
        read_inside(root, "big.txt", 1024)


def test_a_root_must_be_an_existing_folder(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("x")
    with pytest.raises(PathRefused, match="no such folder"):
        resolve_root(tmp_path / "missing")
    with pytest.raises(PathRefused, match="not a directory"):
        resolve_root(tmp_path / "f.txt")


def test_hidden_entries_are_not_walked(tree: tuple[Path, Path]) -> None:
    root, _ = tree
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("x")
    (root / ".swp").write_text("x")
    assert {info.relative for info in walk(root)} == {"ok.md", "sub/deep.txt"}


def test_a_folder_swapped_for_a_link_after_resolving_is_refused(
    tree: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The race: `sub` is checked, then replaced by a link out before the open."""
    import novaberg.memory.library.paths as paths

    root, secret = tree
    (secret / "deep.txt").write_text("secret")
    resolved = paths.resolve_inside

    def swap_then_resolve(root_: Path, relative: str) -> Path:
        real = resolved(root_, relative)
        (root / "sub" / "deep.txt").unlink()
        (root / "sub").rmdir()
        (root / "sub").symlink_to(secret, target_is_directory=True)
        return real

    monkeypatch.setattr(paths, "resolve_inside", swap_then_resolve)
    with pytest.raises(PathRefused, match="outside"):
        read_inside(root, "sub/deep.txt", LIMIT)


def test_a_folder_swapped_for_a_link_during_the_walk_is_not_listed(
    tree: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The walk saw `sub` as a folder; it becomes a link out before it is listed."""
    import novaberg.memory.library.paths as paths

    root, secret = tree
    listed = paths._entries

    def swap_then_list(root_: Path, folder: Path) -> list[os.DirEntry[str]]:
        if folder.name == "sub":
            (root / "sub" / "deep.txt").unlink()
            (root / "sub").rmdir()
            (root / "sub").symlink_to(secret, target_is_directory=True)
        return listed(root_, folder)

    monkeypatch.setattr(paths, "_entries", swap_then_list)
    assert {info.relative for info in walk(root)} == {"ok.md"}
