"""Real Kafka 3.9.1 takes what the translator produces: DumpLogSegments decodes every record to
the same JSON, and a KRaft controller (migration disabled) starts on the log, replays it and
finalizes the migration (POST_MIGRATION), with the migrated metadata in its own image."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from migrate import TranslationOptions, translate
from migrate.translate.password import encode_password
from samples import SampleSpec
from tests.support.kafka import KafkaController, dump_log, dump_log_payloads, metadata_shell
from writers import EncodedBatch, VoterDir, batch_records, record_to_json
from zkreader import ConnectOptions, open_session, read_cluster

SECRET = "oracle-encoder-secret"
NODE = 3000  # KRaft controller ids must differ from the ZK brokers' ids
EPOCH = 1
TIMESTAMP_MS = 1_700_000_000_000


def _write_log(voter: Path, cluster_id: str, records: list[Any]) -> Path:
    """Write the records as one leader epoch into a fresh voter directory."""
    log = VoterDir(voter, node_id=NODE, cluster_id=cluster_id)
    try:
        for batch, data in batch_records(records, base_offset=0, leader_epoch=EPOCH,
                                         timestamp_ms=TIMESTAMP_MS, max_records=200):
            log.append(EncodedBatch(batch.base_offset, batch.last_offset, EPOCH, data))
        log.write_quorum_state(leader_epoch=EPOCH, voters=[NODE], leader_id=NODE)
    finally:
        log.close()
    [segment] = sorted((voter / "__cluster_metadata-0").glob("*.log"))
    return segment


@pytest.mark.oracle
@pytest.mark.slow
def test_kafka_decodes_and_replays_translated_records(
    sample_cluster: Callable[..., Any], tmp_path: Path
) -> None:
    sample = sample_cluster(SampleSpec.clean(topics=5, partitions_per_topic=4))
    sample.client.set("/config/brokers/1", json.dumps({"version": 1, "config": {
        "listener.name.internal.ssl.keystore.password": encode_password("ks-pass", SECRET),
        "log.cleaner.threads": "2",
    }}).encode())
    session = open_session(ConnectOptions(sample.connect, timeout_s=10))
    try:
        snap = read_cluster(session, watch=False)
    finally:
        session.close()
    result = translate(snap, TranslationOptions(password_encoder_secret=SECRET))
    assert result.blockers == []
    cluster_id = sample.manifest.cluster_id

    voter = tmp_path / "voter-1"
    segment = _write_log(voter, cluster_id, result.records)

    # 1. DumpLogSegments decodes every record to exactly the JSON our codec gives
    text = dump_log(segment)
    payloads = dump_log_payloads(segment, text=text)
    assert len(payloads) == len(result.records)
    for got, record in zip(payloads, result.records, strict=True):
        ours = record_to_json(record)
        assert {k: got[k] for k in ("type", "version", "data")} == ours, got["offset"]

    # 2. A KRaft controller with migration disabled starts on it and finalizes the migration
    # a migrated cluster's controllers need the brokers' token secret to publish token data
    controller = KafkaController(tmp_path / "kafka", voter, node_id=NODE, heap="384m", extra={
        "zookeeper.metadata.migration.enable": "false",
        "delegation.token.secret.key": "oracle-token-secret",
    })
    with controller:
        controller.wait_for_log(r"POST_MIGRATION|[Cc]ompleting the ZK migration", timeout=90)
    assert "Encountered metadata publishing fault" not in controller.log_text()
    after = [p for seg in sorted((voter / "__cluster_metadata-0").glob("*.log"))
             for p in dump_log_payloads(seg)]
    states = [p["data"]["zkMigrationState"] for p in after
              if p["type"] == "ZK_MIGRATION_STATE_RECORD"]
    assert states == [1, 3]  # ours (MIGRATION), then the controller's POST_MIGRATION

    # 3. Its own image holds the migrated topics and brokers
    topics = metadata_shell(segment, "ls", "/image/topics/byName").split()
    assert sorted(topics) == sorted(d.data["name"] for d in result.records
                                    if d.type == "TOPIC_RECORD")
    brokers = metadata_shell(segment, "ls", "/image/cluster/brokers").split()
    assert sorted(int(b) for b in brokers) == sorted(snap.brokers)
    counts = Counter(p["type"] for p in after)
    assert counts["ACCESS_CONTROL_ENTRY_RECORD"] == result.counts["ACCESS_CONTROL_ENTRY_RECORD"]
