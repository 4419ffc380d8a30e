"""`zk2kraft verify` at each check point of an online migration, on real ZooKeeper (issue 16,
item 5): a healthy dual-write state verifies clean (exit 0) and an injected divergence at each
check point fails (exit 1).

The states are built by hand as Kafka 3.9 makes them, after `zk2kraft migrate --cutover none`
wrote the log: the KRaft controller appends its records to the log, and dual-writes ZooKeeper
as `KRaftMigrationZkWriter` does:
1. a producer-id block allocated: ProducerIdsRecord(nextProducerId = 7000) in the log,
   `{"broker":-1,"block_start":"7000","block_end":"7999"}` in ZooKeeper (ZooKeeper leads by a
   block: Kafka's own change, listed as such);
2. a topic created through KRaft: TopicRecord + PartitionRecords in the log, the topic znode
   (with its id), its config znode and partition state znodes in ZooKeeper (in both: parity);
3. the brokers rolled to KRaft: each registers itself (a version-4 incarnation id,
   isMigratingZkBroker false) and its /brokers/ids znode is gone (Kafka's own change).
Every value below is written here, from Kafka's formats, not taken from zk2kraft's code.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from samples import SampleSpec
from writers import MetadataRecord, QuorumWriter, VoterDir, batch_records, open_log_source
from zkreader import read_cluster, session_for_client

pytestmark = pytest.mark.slow

ZK2KRAFT = [sys.executable, "-m", "migrate.cli"]
NODE = 3000
TOPIC = "made-through-kraft"
TOPIC_ID = "Vr9k2ZyhQ0eE1AW5rB7wFQ"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*ZK2KRAFT, *args], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "COLUMNS": "250"})


def kafka_uuid() -> str:
    """A Kafka Uuid text of a random (version-4) UUID, as `Uuid.randomUuid()` draws."""
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()


def rec(kind: str, version: int = 0, **data: Any) -> MetadataRecord:
    return MetadataRecord(kind, version, data)


class Controller:
    """The migrated log, continued by hand as a KRaft controller in dual-write continues it."""

    def __init__(self, migrated: Path, cluster_id: str, root: Path) -> None:
        self.records = [r for e in open_log_source(migrated).entries()
                        for r in e.batch.records]  # type: ignore[misc]
        self.cluster_id = cluster_id
        self.root = root
        self.written = 0

    def log(self, *more: MetadataRecord) -> Path:
        """A voter directory holding the migrated log plus `more`."""
        self.written += 1
        d = self.root / f"log{self.written}"
        with QuorumWriter([VoterDir(d, node_id=NODE, cluster_id=self.cluster_id)]) as q:
            for batch, _ in batch_records([*self.records, *more], base_offset=0, leader_epoch=1,
                                          timestamp_ms=1_700_000_000_000, max_records=200):
                q.append_batch(batch)
        return d


def verify(zookeeper: str, voter: Path, out: Path) -> tuple[int, dict[str, Any], str]:
    r = run("verify", "--zookeeper", zookeeper, "--voter", f"{NODE}={voter}", "--json", str(out))
    doc = json.loads(out.read_text()) if out.exists() and r.returncode in (0, 1) else {}
    return r.returncode, doc, r.stdout + r.stderr


def found(doc: dict[str, Any], section: str) -> list[tuple[str, str, str, Any, Any]]:
    return [(d["kind"], d["key"], d["field"], d["zookeeper"], d["quorum"])
            for d in doc[section]]


def topic_records() -> list[MetadataRecord]:
    return [rec("TOPIC_RECORD", name=TOPIC, topicId=TOPIC_ID),
            rec("PARTITION_RECORD", partitionId=0, topicId=TOPIC_ID, replicas=[1, 2],
                isr=[1, 2], leader=1, leaderEpoch=0, partitionEpoch=0, removingReplicas=[],
                addingReplicas=[]),
            rec("PARTITION_RECORD", partitionId=1, topicId=TOPIC_ID, replicas=[2, 1],
                isr=[2, 1], leader=2, leaderEpoch=0, partitionEpoch=0, removingReplicas=[],
                addingReplicas=[])]


def dual_write_topic(zk: Any) -> None:
    """What `ZkTopicMigrationClient.createTopic` writes (controller_epoch = the KRaft epoch)."""
    zk.create(f"/brokers/topics/{TOPIC}", json.dumps({
        "version": 3, "partitions": {"0": [1, 2], "1": [2, 1]}, "adding_replicas": {},
        "removing_replicas": {}, "topic_id": TOPIC_ID}).encode())
    zk.create(f"/config/topics/{TOPIC}", b'{"version":1,"config":{}}')
    for p, (leader, isr) in enumerate(((1, [1, 2]), (2, [2, 1]))):
        zk.create(f"/brokers/topics/{TOPIC}/partitions/{p}/state", json.dumps({
            "controller_epoch": 2, "leader": leader, "version": 1, "leader_epoch": 0,
            "isr": isr}).encode(), makepath=True)


def own_registration(broker: Any, epoch: int) -> MetadataRecord:
    """The RegisterBrokerRecord a broker moved to KRaft gets (its listeners from its znode)."""
    codes = {"PLAINTEXT": 0, "SSL": 1, "SASL_PLAINTEXT": 2, "SASL_SSL": 3}
    return rec("REGISTER_BROKER_RECORD", 2, brokerId=broker.broker_id,
               isMigratingZkBroker=False, incarnationId=kafka_uuid(), brokerEpoch=epoch,
               endPoints=[{"name": e.listener, "host": e.host, "port": e.port,
                           "securityProtocol": codes[e.security_protocol]}
                          for e in broker.endpoints],
               features=[], rack=broker.rack, fenced=False, inControlledShutdown=False)


def test_verify_at_each_dual_write_check_point(sample_cluster: Any, tmp_path: Path) -> None:
    cluster = sample_cluster(SampleSpec.clean(topics=2, partitions_per_topic=2))
    zk = cluster.client
    migrated = tmp_path / "c3000"
    r = run("migrate", "--zookeeper", cluster.connect, "--voter", f"{NODE}={migrated}",
            "--cutover", "none", "--spark-master", "in-process", "--quiet")
    assert r.returncode == 0, r.stderr
    block = json.loads(zk.get("/latest_producer_id_block")[0])
    assert (block["block_start"], block["block_end"]) == ("5000", "5999")  # the sample's
    kafka = Controller(migrated, cluster.manifest.cluster_id, tmp_path)
    out = tmp_path / "verify.json"

    # 1. the KRaft controller hands out 6000..6999: its record says 7000 is next, and it
    #    writes the block after it to ZooKeeper, as broker -1
    pid = rec("PRODUCER_IDS_RECORD", brokerId=1, brokerEpoch=120, nextProducerId=7000)
    zk.set("/latest_producer_id_block",
           b'{"version":1,"broker":-1,"block_start":"7000","block_end":"7999"}')
    code, doc, text = verify(cluster.connect, kafka.log(pid), out)
    assert code == 0, text
    assert found(doc, "differences") == []
    assert found(doc, "changed_by_kafka") == [
        ("producer_ids", "cluster", "nextProducerId", 8000, 7000)]
    assert "changed by Kafka since the migration" in text
    # divergence: ZooKeeper's block is not the one after the log's (the log misses a record)
    zk.set("/latest_producer_id_block",
           b'{"version":1,"broker":-1,"block_start":"8000","block_end":"8999"}')
    code, doc, text = verify(cluster.connect, kafka.log(pid), out)
    assert code == 1, text
    assert found(doc, "differences") == [
        ("producer_ids", "cluster", "nextProducerId", 9000, 7000)]
    assert found(doc, "changed_by_kafka") == []
    zk.set("/latest_producer_id_block",
           b'{"version":1,"broker":-1,"block_start":"7000","block_end":"7999"}')

    # 2. a topic created through KRaft, dual-written
    dual_write_topic(zk)
    code, doc, text = verify(cluster.connect, kafka.log(pid, *topic_records()), out)
    assert code == 0, text
    assert doc["checked"]["topic"] == 3 and doc["checked"]["partition"] == 6
    assert found(doc, "differences") == []
    # divergence: the log's partition 1 lost a replica from its ISR that ZooKeeper still has
    shrunk = [*topic_records()[:2],
              rec("PARTITION_RECORD", partitionId=1, topicId=TOPIC_ID, replicas=[2, 1],
                  isr=[2], leader=2, leaderEpoch=0, partitionEpoch=0, removingReplicas=[],
                  addingReplicas=[])]
    code, doc, text = verify(cluster.connect, kafka.log(pid, *shrunk), out)
    assert code == 1, text
    assert found(doc, "differences") == [("partition", f"{TOPIC}-1", "isr", [2, 1], [2])]

    # 3. the brokers roll to KRaft: each registers itself, its znode goes
    snapshot = read_cluster(session_for_client(zk), watch=False)
    ids = sorted(snapshot.brokers)
    assert ids == [1, 2, 3]
    own = [own_registration(snapshot.brokers[b], 200 + b) for b in ids]
    for b in ids:
        zk.delete(f"/brokers/ids/{b}")
    code, doc, text = verify(cluster.connect, kafka.log(pid, *topic_records(), *own), out)
    assert code == 0, text
    assert found(doc, "differences") == []
    assert found(doc, "changed_by_kafka") == [
        ("broker", "1", "<exists>", False, True), ("broker", "2", "<exists>", False, True),
        ("broker", "3", "<exists>", False, True),
        ("producer_ids", "cluster", "nextProducerId", 8000, 7000)]
    # divergence: broker 3 never registered itself; the log holds only zk2kraft's copy of a
    # znode that is gone
    code, doc, text = verify(cluster.connect, kafka.log(pid, *topic_records(), *own[:2]), out)
    assert code == 1, text
    assert found(doc, "differences") == [("broker", "3", "<exists>", False, True)]

    # and ZooKeeper changed behind the controller's back is caught at the end too
    zk.set(f"/brokers/topics/{TOPIC}/partitions/0/state", json.dumps({
        "controller_epoch": 2, "leader": 2, "version": 1, "leader_epoch": 1,
        "isr": [2]}).encode())
    code, doc, text = verify(cluster.connect, kafka.log(pid, *topic_records(), *own), out)
    assert code == 1, text
    assert [d[:3] for d in found(doc, "differences")] == [
        ("partition", f"{TOPIC}-0", "isr"), ("partition", f"{TOPIC}-0", "leader"),
        ("partition", f"{TOPIC}-0", "leaderEpoch"), ("partition", f"{TOPIC}-0", "partitionEpoch")]
