"""What real Kafka 3.9.1 controllers do with the prefix a stand-in leaves when it dies midway.

The stand-in appends what a migration log starts with (Kafka's `ZkMigrationClient`,
`migrate/_translate_framing`): `FeatureLevelRecord(metadata.version 3.9-IV0)`,
`BeginTransactionRecord("ZK Migration")`, then migrated records, and dies before
`ZkMigrationStateRecord` and `EndTransactionRecord`. The controllers notice (fetch timeout), elect
one of themselves at epoch 2, and that controller activates on the committed prefix. Facts from
Kafka 3.9's `ActivationRecordsGenerator`, checked here against the real thing:
* the open transaction is aborted: the controller logs "Aborting in-progress metadata transaction
  at offset 2" (offset 0 is the stand-in's LeaderChange, 1 the FeatureLevelRecord) and appends
  `AbortTransactionRecord(reason "Controller failover")`, so nothing migrated is served;
* without migration mode the ZK migration state is NONE and it becomes a de-novo KRaft cluster
  ("Loaded ZK migration state of NONE", "This is expected because this is a de-novo KRaft
  cluster"): an empty cluster. In migration mode that state is fatal to activation ("Should not
  have ZK migrations enabled on a cluster that was created in KRaft mode", a fatal fault that
  terminates the controller; the other one then cannot win a majority), which is why the log's
  first records matter (docs/design.md, "Stand-in killed").
* in migration mode, at four points: nothing but the LeaderChange (Kafka bootstraps the log and
  runs its own migration: graceful), after the feature level and inside the transaction (fatal),
  and after EndTransaction (it stays in migration mode on the MIGRATION log).
"""

from __future__ import annotations

import base64
import re
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.kafka import dump_log, dump_log_payloads
from tests.support.standin import follower_segments, standin_quorum
from writers import MetadataRecord

pytestmark = [pytest.mark.oracle, pytest.mark.slow]

FAST_FAILOVER = {"controller.quorum.fetch.timeout.ms": "3000"}


def _prefix() -> list[MetadataRecord]:
    tid = base64.urlsafe_b64encode(bytes(range(1, 17))).decode()[:22]
    return [
        MetadataRecord("FEATURE_LEVEL_RECORD", 0, {"name": "metadata.version", "featureLevel": 21}),
        MetadataRecord("BEGIN_TRANSACTION_RECORD", 0, {"name": "ZK Migration"}),
        MetadataRecord("TOPIC_RECORD", 0, {"name": "orders", "topicId": tid}),
        MetadataRecord("PARTITION_RECORD", 0, {
            "partitionId": 0, "topicId": tid, "replicas": [1], "isr": [1],
            "removingReplicas": [], "addingReplicas": [], "leader": 1, "leaderEpoch": 0,
            "partitionEpoch": 0}),
    ]


def test_a_prefix_inside_the_migration_transaction_is_aborted_by_the_next_leader(
    tmp_path: Path,
) -> None:
    with standin_quorum(tmp_path, extra=FAST_FAILOVER) as q:
        result = q.standin.append_records(_prefix(), timestamp_ms=1_700_000_000_000)
        assert (result.base_offset, result.last_offset) == (1, 4)
        q.standin.close()  # dies: no EndQuorumEpoch, its connections drop
        died = time.monotonic()
        logs = {}
        leader = None
        deadline = died + 120
        while leader is None and time.monotonic() < deadline:
            for c in q.controllers:
                if "Aborting in-progress metadata transaction" in c.log_text():
                    leader = c
            time.sleep(0.5)
        assert leader is not None, "no controller took over within 120 s"
        leader.wait_for_log(r"Aborting in-progress metadata transaction at offset 2\.", 5)
        leader.wait_for_log(r"Loaded ZK migration state of NONE\. "
                            r"This is expected because this is a de-novo KRaft cluster", 30)
        for c in q.controllers:
            logs[c.node_id] = c.log_text()
        segment = follower_segments(leader.metadata_log_dir)[0]
        for c in q.controllers:
            c.stop()
        dumped = dump_log(segment)
    payloads = dump_log_payloads("", text=dumped)
    ours = [p["type"] for p in payloads if p["offset"] <= 4]
    assert ours == ["FEATURE_LEVEL_RECORD", "BEGIN_TRANSACTION_RECORD", "TOPIC_RECORD",
                    "PARTITION_RECORD"]
    aborts = [p for p in payloads if p["type"] == "ABORT_TRANSACTION_RECORD"]
    assert [a["data"] for a in aborts] == [{"reason": "Controller failover"}]
    assert aborts[0]["offset"] > 4
    assert "leader=3000" in logs[leader.node_id]


_MIGRATION_DONE = [
    MetadataRecord("ZK_MIGRATION_STATE_RECORD", 0, {"zkMigrationState": 1}),  # MIGRATION
    MetadataRecord("END_TRANSACTION_RECORD", 0, {}),
]

# (what the stand-in committed before it died, what the next leader does with it)
KILL_POINTS = {
    # only the LeaderChange that opened its epoch: an empty metadata log, so Kafka bootstraps
    # it and starts its own migration (graceful)
    "before any record": (
        [], r"The metadata log appears to be empty\. [^\n]*Putting the controller into "
            r"pre-migration mode"),
    # metadata.version only: a non-empty log in state NONE, fatal in migration mode
    "after the feature level": (
        _prefix()[:1], "FATAL"),
    # inside the migration transaction: aborted, then NONE, fatal in migration mode
    "inside the migration transaction": (
        _prefix(), "FATAL"),
    # the whole migration committed (ZkMigrationState MIGRATION + EndTransaction)
    "after EndTransaction": (
        _prefix() + _MIGRATION_DONE,
        r"Loaded ZK migration state of MIGRATION\. Staying in ZK migration mode since "
        r"'zookeeper\.metadata\.migration\.enable' is still 'true'"),
}


@pytest.mark.parametrize("point", list(KILL_POINTS))
def test_standin_killed_with_controllers_in_migration_mode(
    point: str, tmp_path: Path, zk_chroot: str, zk_server: Any
) -> None:
    """The same death with controllers in migration mode (as the real handoff runs them), at
    four points of the log. Fatal means Kafka's "Should not have ZK migrations enabled on a
    cluster that was created in KRaft mode": the activating controller terminates."""
    records, expected = KILL_POINTS[point]
    migration = {**FAST_FAILOVER, "zookeeper.metadata.migration.enable": "true",
                 "zookeeper.connect": f"{zk_server.connect}{zk_chroot}"}
    with standin_quorum(tmp_path, extra=migration) as q:
        if records:
            q.standin.append_records(records, timestamp_ms=1_700_000_000_000)
        q.standin.close()
        deadline = time.monotonic() + 120
        activated = None
        while activated is None and time.monotonic() < deadline:
            for c in q.controllers:
                text = c.log_text()
                if "Performing controller activation" in text or "Encountered fatal fault" in text:
                    activated = c
            time.sleep(0.5)
        assert activated is not None, "no controller tried to activate within 120 s"
        text = activated.log_text()
    if expected == "FATAL":
        assert "Should not have ZK migrations enabled on a cluster that was created in KRaft " \
            "mode" in text
        assert "Encountered fatal fault: exception while completing controller activation" in text
    else:
        assert re.search(expected, text), text[-3000:]
        assert "Encountered fatal fault" not in text
