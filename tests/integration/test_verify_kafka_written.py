"""verify replays a log that real Kafka has written to: a Kafka 3.9.1 KRaft controller (migration
disabled) starts on the voter directory `migrate --cutover none` wrote, finalizes the migration
and appends its own records (leader change, POST_MIGRATION, ...);
`verify` must replay every one of them and still find parity with ZooKeeper."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from migrate.cli import main
from samples import SampleSpec
from tests.support.kafka import KafkaController, dump_log_payloads

NODE = 3000  # KRaft controller ids must differ from the ZooKeeper brokers' ids


@pytest.mark.oracle
@pytest.mark.slow
def test_verify_replays_a_log_kafka_continued(
    sample_cluster: Callable[..., Any], tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    sample = sample_cluster(SampleSpec.clean(topics=4, partitions_per_topic=3,
                                             delegation_token=False))
    voter = tmp_path / "voter"
    assert main(["migrate", "--zookeeper", sample.connect, "--cutover", "none", "--quiet",
                 "--spark-master", "in-process", "--voter", f"{NODE}={voter}"]) == 0
    capsys.readouterr()
    controller = KafkaController(tmp_path / "kafka", voter, node_id=NODE, heap="384m",
                                 extra={"zookeeper.metadata.migration.enable": "false"})
    with controller:
        controller.wait_for_log(r"POST_MIGRATION|[Cc]ompleting the ZK migration", timeout=90)
    payloads = [p for seg in sorted((voter / "__cluster_metadata-0").glob("*.log"))
                for p in dump_log_payloads(seg)]
    states = [p["data"]["zkMigrationState"] for p in payloads
              if p["type"] == "ZK_MIGRATION_STATE_RECORD"]
    assert states == [1, 3]  # ours (MIGRATION), then Kafka's own POST_MIGRATION

    out = tmp_path / "verify.json"
    code = main(["verify", "--zookeeper", sample.connect, "--voter", f"{NODE}={voter}",
                 "--json", str(out)])
    text = capsys.readouterr()
    doc = json.loads(out.read_text())
    assert code == 0, (doc["differences"][:10], text.err)
    assert doc["parity"] is True and doc["checked"]["partition"] == 12
    assert doc["provenance"]["last_epoch"] > 1  # the controller's own leader epoch
    assert doc["provenance"]["last_offset"] == max(p["offset"] for p in payloads)


@pytest.mark.oracle
@pytest.mark.slow
def test_verify_loads_a_snapshot_kafka_wrote(
    sample_cluster: Callable[..., Any], tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    """Kafka snapshots the migrated image (`.checkpoint`); verify loads the snapshot, skips the
    log offsets it covers, replays the rest, and still finds parity."""
    sample = sample_cluster(SampleSpec.clean(topics=3, partitions_per_topic=2,
                                             delegation_token=False))
    voter = tmp_path / "voter"
    assert main(["migrate", "--zookeeper", sample.connect, "--cutover", "none", "--quiet",
                 "--spark-master", "in-process", "--voter", f"{NODE}={voter}"]) == 0
    controller = KafkaController(tmp_path / "kafka", voter, node_id=NODE, heap="384m", extra={
        "zookeeper.metadata.migration.enable": "false",
        "metadata.log.max.record.bytes.between.snapshots": "1",
    })
    with controller:
        controller.wait_for_log(r"POST_MIGRATION|[Cc]ompleting the ZK migration", timeout=90)
        controller.wait_for_log(r"[Cc]reating (a )?new (KRaft )?snapshot", timeout=90)
    snapshots = sorted((voter / "__cluster_metadata-0").glob("*.checkpoint"))
    assert snapshots and snapshots[-1].name != "00000000000000000000-0000000000.checkpoint"
    capsys.readouterr()
    out = tmp_path / "verify.json"
    code = main(["verify", "--zookeeper", sample.connect, "--voter", f"{NODE}={voter}",
                 "--json", str(out)])
    doc = json.loads(out.read_text())
    assert code == 0, doc["differences"][:10]
    assert doc["checked"]["partition"] == 6 and doc["checked"]["scram"] == 3
