"""Faults around the voter directories, driven through `zk2kraft migrate` as an operator would.

Real ZooKeeper (the sample cluster fixture), the real CLI in a subprocess, real directories:
* a voter directory whose `.lock` is held, as a running Kafka controller holds it (Kafka's
  `FileChannel.tryLock()` is an fcntl F_SETLK write lock over the whole file; the holder here
  takes exactly that lock) -> exit 3 naming the directory and the holder's pid, nothing written.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from zkreader import SampleSpec

pytestmark = pytest.mark.slow

ZK2KRAFT = [sys.executable, "-m", "migrate.cli"]
VOTERS = (3000, 3001, 3002)
SPEC = SampleSpec.clean(topics=6, partitions_per_topic=3)

_HOLDER = r"""
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # what Kafka's FileLock.tryLock() takes
print("locked", flush=True)
sys.stdin.read()
"""


def voter_flags(root: Path, voters: tuple[int, ...] = VOTERS) -> list[str]:
    return [f"--voter={v}={root / f'c{v}'}" for v in voters]


def migrate(connect: str, root: Path, *extra: str,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    cmd = [*ZK2KRAFT, "migrate", "--zookeeper", connect, *voter_flags(root),
           "--spark-master", "in-process", *extra]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "COLUMNS": "200", **(env or {})})


def files_under(root: Path) -> dict[str, bytes]:
    """Every regular file under `root` except the lock files, by relative path."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.name != ".lock"}


@pytest.fixture
def lock_holder() -> Iterator[Callable[[Path], subprocess.Popen[str]]]:
    """Start processes that hold `DIR/.lock` like a Kafka controller; ended after the test."""
    procs: list[subprocess.Popen[str]] = []

    def hold(directory: Path) -> subprocess.Popen[str]:
        directory.mkdir(parents=True, exist_ok=True)
        proc = subprocess.Popen([sys.executable, "-c", _HOLDER, str(directory / ".lock")],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        procs.append(proc)
        assert proc.stdout is not None and proc.stdout.readline() == "locked\n"
        return proc

    yield hold
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(10)


def test_a_voter_held_like_a_running_controller_is_exit_3_naming_the_holder(
    sample_cluster: Callable[..., Any], tmp_path: Path,
    lock_holder: Callable[[Path], subprocess.Popen[str]],
) -> None:
    cluster = sample_cluster(SPEC)
    held = tmp_path / "c3001"
    holder = lock_holder(held)
    result = migrate(cluster.connect, tmp_path)
    assert result.returncode == 3, result.stderr
    assert f"voter directory {held} is locked" in result.stderr
    assert f"{held / '.lock'} is held by pid {holder.pid} (" in result.stderr
    assert files_under(tmp_path) == {}  # nothing written to any voter, nothing staged
    # once the controller is gone, the same command migrates
    assert holder.stdin is not None
    holder.stdin.close()
    holder.wait(10)
    again = migrate(cluster.connect, tmp_path)
    assert again.returncode == 0, again.stderr
