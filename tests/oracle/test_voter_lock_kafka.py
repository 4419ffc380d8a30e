"""A real Kafka 3.9.1 controller holds its metadata.log.dir's `.lock`, and `zk2kraft migrate`
refuses that directory with exit 3 naming the controller's pid (issue 7: migrate used to write
straight past a running controller).

The controller is Kafka's own (`kafka.Kafka` from the Maven Central jars, formatted with
`kafka-storage format`), so the lock it takes is whatever `FileLock.tryLock()` takes; nothing
here imitates it. Once the controller is stopped, its directory is no longer locked.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from samples import SampleSpec
from tests.support.kafka import KafkaController, random_cluster_id, storage_format

pytestmark = [pytest.mark.oracle, pytest.mark.slow]


def migrate(connect: str, voter: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "migrate.cli", "migrate", "--zookeeper", connect,
         "--spark-master", "in-process", "--quiet", f"--voter=3000={voter}"],
        capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL,
        env={**os.environ, "COLUMNS": "200"})


def test_migrate_refuses_the_directory_of_a_running_kafka_controller(
    sample_cluster: Callable[..., Any], tmp_path: Path,
) -> None:
    cluster = sample_cluster(SampleSpec.clean(topics=3, partitions_per_topic=2))
    meta = tmp_path / "meta"
    node = KafkaController(tmp_path / "node", meta, node_id=3000, heap="256m")
    storage_format(node.config_path, random_cluster_id())
    formatted = (meta / "meta.properties").read_bytes()
    with node:
        pid = node.pid
        assert pid is not None
        result = migrate(cluster.connect, meta)
        assert result.returncode == 3, result.stderr
        assert f"voter directory {meta} is locked" in result.stderr
        assert f"{meta / '.lock'} is held by pid {pid} (java " in result.stderr
        assert "kafka.Kafka" in result.stderr
        assert (meta / "meta.properties").read_bytes() == formatted  # untouched
        assert not list(meta.rglob(".zk2kraft-staging"))
    # stopped: the lock is free, and what is there now is Kafka's own log, which migrate
    # refuses to overwrite (exit 1), never silently
    after = migrate(cluster.connect, meta)
    assert after.returncode == 1, after.stderr
    assert "is locked" not in after.stderr
