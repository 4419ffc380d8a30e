"""An internal error (exit 70) names where it was raised and keeps its traceback in a file: a
migration that hit a bug cannot be re-run with -v to see it (CI saw only "KeyError: 0")."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from migrate.cli import app


def _fails_deep(args: argparse.Namespace) -> int:
    table: dict[int, str] = {}
    return len(table[0])  # the bug: a broker id missing from a table


def test_exit_70_names_the_frame_and_the_traceback_file(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        tmp_path: Path) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr("tempfile.tempdir", None)  # read TMPDIR afresh
    command = app._Command(lambda sub: None, _fails_deep)
    args = argparse.Namespace(command="migrate")

    code = app._run(command, args, guard=None)  # type: ignore[arg-type]  # not reached

    assert code == 70
    err = capsys.readouterr().err
    m = re.fullmatch(r"zk2kraft migrate: internal error: KeyError: 0, raised at "
                     r"tests/unit/migrate/test_internal_error\.py:(\d+) in _fails_deep; the "
                     r"traceback is in (\S+) \(please report it with that file\)\n", err)
    assert m is not None, err
    assert int(m.group(1)) == 17  # the `table[0]` line above
    kept = Path(m.group(2))
    assert kept.parent == tmp_path and kept.name.startswith("zk2kraft-internal-error-")
    text = kept.read_text()
    assert text.startswith("Traceback (most recent call last):")
    assert "in _fails_deep" in text and "return len(table[0])" in text
    assert text.rstrip().endswith("KeyError: 0")


def test_exit_70_without_a_writable_temporary_directory_still_says_where(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        tmp_path: Path) -> None:
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path / "gone"))
    code = app._run(app._Command(lambda sub: None, _fails_deep),
                    argparse.Namespace(command="plan"), guard=None)  # type: ignore[arg-type]
    assert code == 70
    err = capsys.readouterr().err
    assert err == ("zk2kraft plan: internal error: KeyError: 0, raised at "
                   "tests/unit/migrate/test_internal_error.py:17 in _fails_deep (the traceback "
                   "could not be written to a file; run with -v to print it)\n")
