"""Exit codes and messages through the CLI, as an operator meets them (issue 7, defect 7 and the
flag half of defect 4): every report path is checked before any work, non-finite and negative
numbers are refused, out-of-range voter ids are refused, and the same damaged file ends `verify`
and `inspect` the same way (2).

Expected codes are the contract (0 ok, 1 findings, 2 bad flags/data, 3 unreachable/unwritable),
written by hand.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from samples import SampleSpec
from tests.support.immutable import Immutable

ZK2KRAFT = [sys.executable, "-m", "migrate.cli"]
NOWHERE = "127.0.0.1:9"  # nothing listens there; flags must fail before any connection


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*ZK2KRAFT, *args], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "COLUMNS": "200"})


def test_unwritable_json_is_refused_before_any_voter_is_written(
    sample_cluster: Any, tmp_path: Path, immutable: Immutable
) -> None:
    cluster = sample_cluster(SampleSpec.clean(topics=2))
    reports = tmp_path / "reports"
    reports.mkdir()
    immutable.freeze([reports])
    voter = tmp_path / "c3000"
    r = run("migrate", "--zookeeper", cluster.connect, "--voter", f"3000={voter}",
            "--spark-master", "in-process", "--json", str(reports / "migrate.json"))
    assert r.returncode == 2, r.stderr
    assert "--json" in r.stderr and str(reports) in r.stderr
    assert not voter.exists()  # refused before any work


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "0", "-3"])
def test_zk_timeout_must_be_a_finite_positive_number(value: str) -> None:
    r = run("plan", "--zookeeper", NOWHERE, f"--zk-timeout={value}")
    assert r.returncode == 2, r.stderr
    assert "--zk-timeout" in r.stderr


def test_max_records_must_not_be_negative(tmp_path: Path) -> None:
    r = run("inspect", str(tmp_path), "--max-records", "-5")
    assert r.returncode == 2, r.stderr
    assert "--max-records" in r.stderr


@pytest.mark.parametrize("node_id", ["2147483648", "-1", "99999999999999999999"])
def test_voter_id_outside_int32_is_refused(node_id: str, tmp_path: Path) -> None:
    voter = tmp_path / "c"
    r = run("migrate", "--zookeeper", NOWHERE, f"--voter={node_id}={voter}",
            "--spark-master", "in-process")
    assert r.returncode == 2, r.stderr
    assert "--voter" in r.stderr and node_id in r.stderr
    assert not voter.exists()


def test_damaged_meta_properties_is_exit_2_in_verify_as_in_inspect(
    sample_cluster: Any, tmp_path: Path
) -> None:
    cluster = sample_cluster(SampleSpec.clean(topics=1))
    voter = tmp_path / "c3000"
    r = run("migrate", "--zookeeper", cluster.connect, "--voter", f"3000={voter}",
            "--spark-master", "in-process", "--quiet")
    assert r.returncode == 0, r.stderr
    meta = voter / "meta.properties"
    meta.write_text(meta.read_text().replace("node.id=3000", "node.id=three-thousand"))
    inspected = run("inspect", str(voter))
    verified = run("verify", "--zookeeper", cluster.connect, "--voter", f"3000={voter}")
    for r in (inspected, verified):
        assert r.returncode == 2, r.stderr
        assert str(meta) in r.stderr and "three-thousand" in r.stderr


def test_existing_voter_dir_is_never_said_to_need_creating(
    sample_cluster: Any, tmp_path: Path, immutable: Immutable
) -> None:
    cluster = sample_cluster(SampleSpec.clean(topics=1))
    parent = tmp_path / "mnt"
    voter = parent / "c3000"
    voter.mkdir(parents=True)
    immutable.freeze([parent])  # the voter dir exists and is writable; its parent is not
    r = run("migrate", "--zookeeper", cluster.connect, "--voter", f"3000={voter}",
            "--spark-master", "in-process", "--quiet")
    assert "cannot create" not in r.stderr
    if r.returncode != 0:  # staging next to the voter dir needs the parent: say so
        assert r.returncode == 3, r.stderr
        assert str(parent) in r.stderr


def test_scram_iterations_past_int32_name_the_znode(sample_cluster: Any, tmp_path: Path) -> None:
    cluster = sample_cluster(SampleSpec.clean(topics=1))
    # a well-formed SCRAM-SHA-256 credential but for its iteration count (3,000,000,000)
    cred = ("salt=c2FsdHNhbHRzYWx0,stored_key=c3RvcmVkc3RvcmVkc3RvcmVk,"
            "server_key=c2VydmVyc2VydmVyc2VydmVy,iterations=3000000000")
    cluster.client.create("/config/users/mallory", json.dumps(
        {"version": 1, "config": {"SCRAM-SHA-256": cred}}).encode(), makepath=True)
    voter = tmp_path / "c3000"
    for r in (run("plan", "--zookeeper", cluster.connect),
              run("migrate", "--zookeeper", cluster.connect, "--voter", f"3000={voter}",
                  "--spark-master", "in-process")):
        assert r.returncode == 2, r.stderr
        assert "/config/users/mallory" in r.stderr and "iterations=3000000000" in r.stderr
        assert "c2FsdHNhbHRzYWx0" not in r.stderr + r.stdout  # the salt is never echoed
    assert not voter.exists()
