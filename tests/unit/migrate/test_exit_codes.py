"""The one exit-code table: complete, inherited by subclasses, and the README's table is it."""

from __future__ import annotations

import re
from pathlib import Path

import migrate.errors
import verify.errors
import writers
import writers.errors
import zkreader.errors
from migrate.cli.exit_codes import EXIT_CODES, exit_code_for

README = Path(__file__).resolve().parents[3] / "README.md"


def _error_classes() -> set[type[BaseException]]:
    out: set[type[BaseException]] = set()
    todo: list[type[BaseException]] = [migrate.errors.MigrateError, zkreader.errors.ZkReaderError,
                                       writers.errors.WriterError, verify.errors.VerifyError]
    while todo:
        cls = todo.pop()
        out.add(cls)
        todo.extend(cls.__subclasses__())
    return out


def test_hand_written_codes_by_class() -> None:
    # the contract, written out by hand (design "Command line", README)
    assert exit_code_for(migrate.errors.BlockersFoundError("x")) == 1
    assert exit_code_for(writers.errors.VoterStateError("x")) == 1
    assert exit_code_for(writers.errors.VoterFileFormatError("x")) == 2
    assert exit_code_for(zkreader.errors.ZnodeFormatError("/a", "b")) == 2
    assert exit_code_for(writers.errors.LogCorruptionError("f", 0, 1, "p")) == 2
    assert exit_code_for(zkreader.errors.ZkUnreachableError("x")) == 3
    assert exit_code_for(writers.errors.VoterUnavailableError("x")) == 3
    assert exit_code_for(migrate.errors.ReportWriteError("x")) == 3
    assert exit_code_for(migrate.errors.CutoverUnconfirmedError("x")) == 4
    assert exit_code_for(writers.BatchTooLargeError("x")) == 2  # not listed: its base's code
    assert exit_code_for(OSError("x")) is None  # not ours: a bug, exit 70
    assert exit_code_for(ValueError("x")) is None


def test_no_class_carries_its_own_exit_code() -> None:
    for cls in _error_classes():
        assert "exit_code" not in vars(cls), (
            f"{cls.__name__} sets exit_code; exit codes live in migrate/cli/exit_codes.py")
        assert exit_code_for(cls.__new__(cls)) in (1, 2, 3, 4), cls


def test_readme_table_is_the_code_table() -> None:
    rows = re.findall(r"^\| (\d+) \|[^|]*\|([^|\n]*)\|$", README.read_text(), re.MULTILINE)
    documented: dict[str, int] = {}
    for code, classes in rows:
        for name in re.findall(r"`(\w+)`", classes):
            documented[name] = int(code)
    assert documented == {cls.__name__: code for cls, code in EXIT_CODES.items()}
