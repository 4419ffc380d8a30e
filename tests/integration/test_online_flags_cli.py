"""The online migration's flags, checked with the others before anything is written (issue 17,
items 4 and 5), through the CLI as an operator meets them: an unusable `--journal`, a
non-finite `--broker-wait`, `--broker-wait` without `--standin`, a malformed
`--bootstrap-server`, a non-finite or non-positive `--max-window`, a negative `--voter` id.
Each is exit 2 naming the flag, at once, with the voter directories and ZooKeeper untouched.
Expected codes and phrases are written by hand.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from samples import SampleSpec

ZK2KRAFT = [sys.executable, "-m", "migrate.cli"]
NOWHERE = "127.0.0.1:9"  # nothing listens there; flags must fail before any connection
VOTERS = (3000, 3001, 3002)


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*ZK2KRAFT, *args], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "COLUMNS": "200"})


def voters(root: Path) -> list[str]:
    return [f"--voter={v}={root / f'c{v}'}" for v in VOTERS]


def untouched(cluster: Any, root: Path) -> None:
    assert not any((root / f"c{v}").exists() for v in VOTERS), sorted(os.listdir(root))
    zk = cluster.client
    assert zk.get("/controller_epoch")[0] == b"3"  # the sample's epoch: never fenced
    assert zk.exists("/migration") is None


@pytest.mark.parametrize(("journal", "problem"), [
    ("/etc/passwd", "/etc/passwd is not a directory"),
    ("/proc/zz", "cannot create a directory in /proc (ENOENT"),
])
def test_unusable_journal_is_exit_2_before_any_voter_is_written(
    sample_cluster: Any, tmp_path: Path, journal: str, problem: str
) -> None:
    cluster = sample_cluster(SampleSpec.clean(topics=2))
    r = run("migrate", "--zookeeper", cluster.connect, "--cutover", "now", *voters(tmp_path),
            "--journal", journal)
    assert r.returncode == 2, r.stderr
    assert f"--journal {journal}:" in r.stderr and problem in r.stderr, r.stderr
    untouched(cluster, tmp_path)


@pytest.mark.parametrize("value", ["nan", "inf"])
def test_broker_wait_must_be_a_finite_number(tmp_path: Path, value: str) -> None:
    r = run("migrate", "--zookeeper", NOWHERE, "--cutover", "now", "--broker-wait", value,
            "--standin", f"3000@127.0.0.1:9093={tmp_path / 's'}", "--controller", "3001@h:1")
    assert r.returncode == 2, r.stderr
    assert "--broker-wait: must be >= 0 seconds, a finite number" in r.stderr, r.stderr
    assert not (tmp_path / "s").exists()


def test_broker_wait_with_local_voters_is_refused(tmp_path: Path) -> None:
    r = run("migrate", "--zookeeper", NOWHERE, "--cutover", "now", "--broker-wait", "5",
            *voters(tmp_path))
    assert r.returncode == 2, r.stderr
    assert "--broker-wait: only with --standin" in r.stderr, r.stderr
    assert not (tmp_path / "c3000").exists()


def test_broker_wait_without_a_cutover_is_refused(tmp_path: Path) -> None:
    r = run("migrate", "--zookeeper", NOWHERE, "--broker-wait", "5", *voters(tmp_path))
    assert r.returncode == 2, r.stderr
    assert "--broker-wait needs --cutover now or manual with --standin" in r.stderr, r.stderr
    assert not (tmp_path / "c3000").exists()


@pytest.mark.parametrize("value", ["nan", "inf", "0", "-1"])
def test_max_window_must_be_a_positive_finite_number(tmp_path: Path, value: str) -> None:
    # before the fix, nan and inf passed the check ("nan <= 0" is false) and the run went on
    r = run("migrate", "--zookeeper", NOWHERE, "--cutover", "now", *voters(tmp_path),
            "--bootstrap-server", "127.0.0.1:9092", "--max-window", value)
    assert r.returncode == 2, r.stderr
    assert "--max-window: must be > 0 seconds, a finite number" in r.stderr, r.stderr
    assert not (tmp_path / "c3000").exists()


def test_max_window_without_bootstrap_server_is_refused(tmp_path: Path) -> None:
    r = run("migrate", "--zookeeper", NOWHERE, "--cutover", "now", *voters(tmp_path),
            "--max-window", "5")
    assert r.returncode == 2, r.stderr
    assert "needs --bootstrap-server" in r.stderr, r.stderr
    assert not (tmp_path / "c3000").exists()


@pytest.mark.parametrize(("value", "problem"), [
    ("notahostport", "expected HOST:PORT"),
    ("127.0.0.1:0", "port must be 1..65535"),
])
def test_malformed_bootstrap_server_is_exit_2_at_once(
    sample_cluster: Any, tmp_path: Path, value: str, problem: str
) -> None:
    cluster = sample_cluster(SampleSpec.clean(topics=2))
    started = time.monotonic()
    r = run("migrate", "--zookeeper", cluster.connect, "--cutover", "now", *voters(tmp_path),
            "--bootstrap-server", value)
    elapsed = time.monotonic() - started
    assert r.returncode == 2, r.stderr
    assert f"--bootstrap-server {value!r}: {problem}" in r.stderr, r.stderr
    assert elapsed < 30, elapsed  # not after the canary's 60 s wait for a broker
    untouched(cluster, tmp_path)


@pytest.mark.parametrize("command", ["plan", "migrate", "verify"])
def test_negative_voter_id_is_named_not_taken_for_an_option(tmp_path: Path, command: str) -> None:
    r = run(command, "--zookeeper", NOWHERE, "--voter", f"-1={tmp_path / 'c'}")
    assert r.returncode == 2, r.stderr
    assert "expected one argument" not in r.stderr, r.stderr
    assert f"--voter '-1={tmp_path / 'c'}': node id must be 0..2147483647" in r.stderr, r.stderr
