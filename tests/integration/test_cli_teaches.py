"""What `--help`, `--version` and the flags tell a newcomer, through the CLI (issue 18).

Expected texts are written by hand from what an operator should read; the version comes from
pyproject.toml, read here, not from the code under test. Kafka's facts: metadata.version 4.0-IV3
is feature level 25 and 4.1-IV1 is 27 (`MetadataVersion` of Kafka 4.1.1), and Kafka 4.0's
highest level is 4.0-IV3.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from kazoo.client import KazooClient

from samples import SampleSpec

ZK2KRAFT = [sys.executable, "-m", "migrate.cli"]
ROOT = Path(__file__).resolve().parents[2]
SUBCOMMANDS = ["snapshot", "plan", "migrate", "verify", "rollback", "prepare-broker", "inspect"]
VOTERS = (3000, 3001, 3002)


def run(*args: str, columns: int = 100) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*ZK2KRAFT, *args], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "COLUMNS": str(columns)})


def help_text(*command: str) -> str:
    """The help of `command` unwrapped (argparse wraps at COLUMNS, also inside hyphenated
    words), whitespace runs as one space."""
    result = run(*command, "--help", columns=10_000)
    assert result.returncode == 0, result.stderr
    return " ".join(result.stdout.split())


def voter_flags(root: Path) -> list[str]:
    return [f"--voter={v}={root / f'c{v}'}" for v in VOTERS]


def feature_level(voter: Path) -> int:
    first = run("inspect", str(voter), "--json").stdout.splitlines()[0]
    record = json.loads(first)
    assert record["data"]["name"] == "metadata.version", record
    level: int = record["data"]["featureLevel"]
    return level


def test_version_is_the_package_version_from_pyproject() -> None:
    expected = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    result = run("--version")
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"zk2kraft {expected}\n"


def test_top_level_help_teaches_the_paths_and_the_exit_codes() -> None:
    text = help_text()
    assert "later, cut over" not in text
    assert "--version" in text
    assert "which path fits which cluster" in text
    for path in ("--cutover now|manual --on-cutover CMD",
                 "--standin ID@HOST:PORT=DIR --controller ID@HOST:PORT",
                 "--offline [--target-kafka 4.1]", "--cutover none"):
        assert path in text, path
    assert "exit codes: 0 success" in text and "130/143 interrupted" in text


@pytest.mark.parametrize("command", SUBCOMMANDS)
def test_each_subcommand_points_to_the_top_level_epilog_instead_of_repeating_it(
    command: str,
) -> None:
    text = help_text(command)
    assert "0 success" not in text and "which path fits which cluster (" not in text
    assert text.endswith("exit codes, secrets and which path fits which cluster: zk2kraft --help")


def test_migrate_help_says_what_follows_a_copy_only_run() -> None:
    text = help_text("migrate")
    assert "and, later, cut over" not in text
    assert "--cutover none copies and stops there" in text
    # the metadata.version condition is stated for both online modes, before either is described
    cutover = text[text.index("--cutover {none,now,manual} none:"):text.index("--on-cutover CMD ")]
    assert "now and manual need --metadata-version 3.6-IV1 or later" in cutover
    assert cutover.index("3.6-IV1") < cutover.index("now copies")


def test_spark_master_reads_the_same_in_migrate_and_verify() -> None:
    migrate, verify = help_text("migrate"), help_text("verify")
    for text in (migrate, verify):
        assert "'in-process' never starts Spark" in text
        assert "a Spark master URL (local[4], spark://...) runs them on that Spark" in text
    assert "--spark-master auto|in-process|URL" in migrate
    assert "--spark-master in-process|URL" in verify
    refused = run("verify", "--zookeeper", "127.0.0.1:1", "--voter", "3000=/nonexistent",
                  "--spark-master", "auto")
    assert refused.returncode == 2
    assert "--spark-master" in refused.stderr and "'auto' is migrate's" in refused.stderr


def test_zookeeper_tls_files_have_help() -> None:
    text = help_text("snapshot")
    assert "--zk-tls-ca PEM with --zk-tls: CA certificate(s)" in text
    assert "--zk-tls-cert PEM with --zk-tls: this client's certificate" in text
    assert "--zk-tls-key PEM with --zk-tls: the private key of --zk-tls-cert" in text


@pytest.mark.parametrize("target", ["4.0", "4.1", "4.x"])
def test_every_kafka_4_target_needs_offline(target: str, tmp_path: Path) -> None:
    result = run("migrate", "--zookeeper", "127.0.0.1:1", *voter_flags(tmp_path),
                 "--target-kafka", target)
    assert result.returncode == 2
    assert f"--target-kafka {target} needs --offline" in result.stderr
    assert not tmp_path.joinpath("c3000").exists()


def test_kafka_4_0_refuses_a_4_1_metadata_version(tmp_path: Path) -> None:
    result = run("migrate", "--zookeeper", "127.0.0.1:1", *voter_flags(tmp_path), "--offline",
                 "--target-kafka", "4.0", "--metadata-version", "4.1-IV1")
    assert result.returncode == 2
    assert "Kafka 4.0 cannot run it (its highest is 4.0-IV3)" in result.stderr
    assert "--target-kafka 4.1" in result.stderr


def _stop_brokers(client: KazooClient) -> None:
    """What stopping every broker leaves: their ephemerals and the controller's are gone."""
    for broker in client.get_children("/brokers/ids"):
        client.delete(f"/brokers/ids/{broker}")
    client.delete("/controller")


@pytest.mark.parametrize(("flags", "level"), [
    (["--target-kafka", "4.0"], 25),
    (["--target-kafka", "4.1"], 27),  # 4.1-IV1, Kafka 4.1.1's LATEST_PRODUCTION
    (["--target-kafka", "4.1", "--metadata-version", "4.0-IV3"], 25),
    # Kafka 4.4.0's MetadataVersion: 4.2-IV1 = 29, 4.3-IV0 = 30, 4.4-IV2 = 33 (each line's
    # LATEST_PRODUCTION, `fromVersionString("4.N")`); 4.x is any line: 4.0-IV3 (25), which
    # Kafka 4.0.0 (the oldest 4.x) formats as its highest stable level
    (["--target-kafka", "4.2"], 29),
    (["--target-kafka", "4.3"], 30),
    (["--target-kafka", "4.4"], 33),
    (["--target-kafka", "4.x"], 25),
])
def test_kafka_4_0_and_4_1_targets_write_their_metadata_version(
    sample_cluster: Callable[..., Any], tmp_path: Path, flags: list[str], level: int
) -> None:
    cluster = sample_cluster(SampleSpec.clean(topics=2, partitions_per_topic=2))
    _stop_brokers(cluster.client)
    migrate = run("migrate", "--zookeeper", cluster.connect, "--offline", *flags,
                  *voter_flags(tmp_path))
    assert migrate.returncode == 0, migrate.stderr
    assert feature_level(tmp_path / "c3000") == level
    assert run("verify", "--zookeeper", cluster.connect, "--offline", "--quiet",
               *voter_flags(tmp_path)).returncode == 0


def test_migrate_output_is_headed_migrate_not_plan(
    sample_cluster: Callable[..., Any], tmp_path: Path
) -> None:
    cluster = sample_cluster(SampleSpec.clean(topics=2, partitions_per_topic=2))
    result = run("migrate", "--zookeeper", cluster.connect, *voter_flags(tmp_path),
                 "--spark-master", "in-process")
    assert result.returncode == 0, result.stderr
    out = result.stdout + result.stderr
    assert "zk2kraft migrate" in out
    assert "zk2kraft plan" not in out and "records migrate would write" not in out
