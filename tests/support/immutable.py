"""Really unwritable files and directories for fault tests: `chattr +i`.

Root is not stopped by permissions, and an immutable inode refuses writes even through an
already open descriptor, so this is how a voter directory (or a report path) is made to fail
under a running process. The `immutable` fixture (tests/conftest.py) hands out an `Immutable`
and clears whatever is still immutable when the test ends, so tmp_path can be removed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

import pytest

__all__ = ["Immutable", "set_immutable", "voter_paths"]


def set_immutable(paths: Sequence[Path], on: bool) -> None:
    """`chattr +i` (or `-i`) on `paths`; fails the test (never skips) where that is impossible."""
    if shutil.which("chattr") is None:
        pytest.fail("chattr (e2fsprogs) is needed to make a file or directory unwritable")
    if os.geteuid() != 0:
        pytest.fail("making an open file unwritable needs root (chattr +i); run as root")
    proc = subprocess.run(["chattr", "+i" if on else "-i", *map(str, paths)],
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        pytest.fail(f"chattr failed (filesystem without immutable support?): {proc.stderr}")


def voter_paths(voter_dir: Path) -> list[Path]:
    """A voter directory, its metadata partition directory and every file in it."""
    part = voter_dir / "__cluster_metadata-0"
    return [voter_dir, part, *sorted(part.iterdir())]


class Immutable:
    """The paths a test made immutable; `release` (or the fixture's teardown) undoes them."""

    def __init__(self) -> None:
        self.held: list[Path] = []

    def freeze(self, paths: Sequence[Path]) -> None:
        """Make `paths` immutable (recorded first, so a half-applied chattr is still undone)."""
        self.held.extend(paths)
        set_immutable(paths, on=True)

    def release(self) -> None:
        """Make every held path writable again."""
        if self.held:
            set_immutable(self.held, on=False)
            self.held.clear()
