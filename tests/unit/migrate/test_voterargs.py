"""The one `--voter` rule set: plan, migrate and verify refuse the same voter sets."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from migrate.cli import main
from migrate.errors import BadFlagError
from migrate.flags.voters import check_voter_flags, parse_voter


def test_parse_voter_syntax() -> None:
    assert parse_voter("3000=/var/kraft") == (3000, Path("/var/kraft"))
    for bad in ["3000", "=/x", "3000=", "x=/a", "-1=/a"]:
        with pytest.raises(argparse.ArgumentTypeError, match="--voter"):
            parse_voter(bad)


@pytest.mark.parametrize(
    ("pairs", "message"),
    [
        ([(1, "a"), (1, "b")], "node id 1 given twice"),
        ([(1, "a"), (2, "a")], "same or nested directory as voter 1"),
        ([(1, "a"), (2, "a/b")], "same or nested directory as voter 1"),
        ([(1, "a/b"), (2, "a")], "same or nested directory as voter 1"),
        ([(1, "file")], "exists and is not a directory"),
    ],
)
@pytest.mark.parametrize("required", [True, False])
def test_every_command_refuses_the_same_sets(
    tmp_path: Path, pairs: list[tuple[int, str]], message: str, required: bool
) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(BadFlagError, match=message):
        check_voter_flags([(i, tmp_path / d) for i, d in pairs], required=required)


def test_required_and_optional(tmp_path: Path) -> None:
    with pytest.raises(BadFlagError, match="at least one"):
        check_voter_flags([], required=True)
    assert check_voter_flags(None, required=False) == []
    got = check_voter_flags([(2, tmp_path / "b" / ".." / "c"), (1, tmp_path / "a")],
                            required=True)
    assert got == [(2, tmp_path.resolve() / "c"), (1, tmp_path.resolve() / "a")]


@pytest.mark.parametrize("command", ["plan", "migrate", "verify"])
def test_nested_voter_dirs_exit_2_in_every_command(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 127.0.0.1:1 is never reached: the flags are refused first
    argv = [command, "--zookeeper", "127.0.0.1:1", "--voter", f"3000={tmp_path}/c",
            "--voter", f"3001={tmp_path}/c/inner"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "--voter 3001=" in err and "same or nested directory as voter 3000" in err
    assert not (tmp_path / "c").exists()
