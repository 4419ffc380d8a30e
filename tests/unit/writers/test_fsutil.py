"""The one private-file writer (`writers.replace_private` / `writers.atomic_write`)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from writers import atomic_write, replace_private


def test_new_file_is_0600_whatever_the_umask(tmp_path: Path) -> None:
    target = tmp_path / "journal.json"
    old = os.umask(0)
    try:
        atomic_write(target, b"{}")
    finally:
        os.umask(old)
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert target.read_bytes() == b"{}"


def test_a_failure_inside_leaves_the_target_as_it_was_and_no_temp_file(tmp_path: Path) -> None:
    target = tmp_path / "report.json"
    target.write_bytes(b"old")
    for failure in (OSError("disk full"), KeyboardInterrupt()):
        with pytest.raises(type(failure)), replace_private(target) as out:
            out.write(b"half of the new")
            raise failure
        assert target.read_bytes() == b"old"
        assert [p.name for p in tmp_path.iterdir()] == ["report.json"]


def test_streamed_chunks_replace_the_target(tmp_path: Path) -> None:
    target = tmp_path / "snapshot.jsonl"
    target.write_bytes(b"old")
    with replace_private(target) as out:
        for chunk in (b"a\n", b"b\n"):
            out.write(chunk)
    assert target.read_bytes() == b"a\nb\n"
    assert [p.name for p in tmp_path.iterdir()] == ["snapshot.jsonl"]


def test_a_missing_directory_raises_and_creates_nothing(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        atomic_write(tmp_path / "missing" / "x", b"x")
    assert list(tmp_path.iterdir()) == []
