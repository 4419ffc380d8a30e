"""What real Kafka 3.9.1 controllers do with the prefix a stand-in leaves when it dies midway.

The stand-in appends what a migration log starts with (Kafka's `ZkMigrationClient`,
`migrate/translate/framing.py`): `FeatureLevelRecord(metadata.version 3.9-IV0)`,
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
  first records matter (docs/design/standin-recovery.md, "Stand-in killed").
* in migration mode, at four points: nothing but the LeaderChange (Kafka bootstraps the log and
  runs its own migration: graceful), after the feature level and inside the transaction (fatal),
  and after EndTransaction (it stays in migration mode on the MIGRATION log).

Through the CLI (`zk2kraft migrate --standin`, SIGKILLed by the crash hook at the pre-copy, the
mirror, after the fence and after EndTransaction, with real controllers 3001/3002 following): a
controller takes over, and the re-run of the same command exits 1 with the situation in hand-
checked phrases; its advice is then followed against real Kafka (before the drain committed it
offers no controller in the stand-in's slot, since Kafka 3.9.1 would fold the aborted records
back into such a controller's image, but starting over or, after the fence, the printed rollback,
which hands ZooKeeper back; after EndTransaction the re-run writes /migration and a restarted
controller claims ZooKeeper and reaches DUAL_WRITE, with parity in its own log). Re-run at once
after a kill at the fence, before any controller won, the stand-in leads again and completes the
handoff.
"""

from __future__ import annotations

import base64
import json
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from samples import SampleSpec
from tests.support.kafka import (
    KafkaController,
    dump_log,
    dump_log_payloads,
    first_node_logging,
)
from tests.support.migration_cluster import wait_for_kraft_claim
from tests.support.standin import (
    follower_segments,
    migrate_through_standin,
    migration_mode_controllers,
    standin_quorum,
    verify_voter_dir,
)
from writers import MetadataRecord

pytestmark = [pytest.mark.oracle, pytest.mark.slow]

FAST_FAILOVER = {"controller.quorum.fetch.timeout.ms": "3000"}
# 3002 notices a dead leader later than the others: equal fetch timeouts make two controllers
# candidates at the same epoch, each voting for itself, and a split vote is only retried after
# the long election timeout (30-60 s, Kafka's randomised timeout); staggered, the first candidate
# gets the other's vote at once (Kafka 3.9 has no pre-vote: a follower grants a higher epoch)
STAGGERED = {3002: {"controller.quorum.fetch.timeout.ms": "6000"}}


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
    with standin_quorum(tmp_path, extra=FAST_FAILOVER, node_extra=STAGGERED) as q:
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
    with standin_quorum(tmp_path, extra=migration, node_extra=STAGGERED) as q:
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


# ------------------------------------------------------------------------------------------------
# Through the CLI: `zk2kraft migrate --standin` SIGKILLed at four points (the crash hook
# `ZK2KRAFT_CRASH_AT`, migrate/online/run.py), a real controller taking over, then the re-run.

# point -> (crash hook, --cutover mode)
CLI_KILL_POINTS = {
    "pre-copy": ("precopy_batch:2", "now"),
    "mirror": ("mirror_append", "manual"),
    "after the fence": ("after_fence", "now"),
    "after EndTransaction": ("after_end_transaction", "now"),
}
_CLAIM_KEYS = ("/controller", "/controller_epoch")


def _kill_standin(point: str, connect: str, zk: Any, ports: dict[int, int], root: Path) -> str:
    """Run `migrate --standin` until the crash hook kills it at `point`; its output."""
    hook, cutover = CLI_KILL_POINTS[point]
    env = {"ZK2KRAFT_PRECOPY_CHUNK": "10", "ZK2KRAFT_CRASH_AT": hook}
    proc = migrate_through_standin(connect, ports, root, env=env, cutover=cutover, popen=True,
                                   broker_wait=0)
    if cutover == "manual":
        # a change while mirroring: the hook kills the tool right after appending its delta
        journal = root / "journal" / "journal.json"
        deadline = time.monotonic() + 180
        while not (journal.exists() and json.loads(journal.read_text())["phase"] == "mirror"):
            assert time.monotonic() < deadline and proc.poll() is None, proc.communicate()
            time.sleep(0.05)
        topic = sorted(zk.get_children("/brokers/topics"))[0]
        zk.set(f"/config/topics/{topic}", b'{"version":1,"config":{"retention.ms":"123"}}')
    out, err = proc.communicate(timeout=400)
    assert proc.returncode == -9, out + err
    assert f"killing zk2kraft at {hook.split(':')[0]}" in err
    return out + err


def _wait_for_activation(nodes: list[KafkaController]) -> KafkaController:
    return first_node_logging(nodes, "Performing controller activation",
                              "no controller activated after the stand-in died")


def _one_line(text: str) -> str:
    """The CLI's message with rich's line wrapping undone."""
    return " ".join(text.split())


@pytest.mark.parametrize("point", list(CLI_KILL_POINTS))
def test_standin_killed_through_the_cli_then_rerun(
    point: str, sample_cluster: Callable[..., Any], tmp_path: Path
) -> None:
    """kill -9 of `migrate --standin` at `point` with real controllers following; a controller
    takes over; the re-run says where things stand, and its advice works on real Kafka."""
    cluster = sample_cluster(SampleSpec.clean(topics=5, partitions_per_topic=3))
    zk = cluster.client
    cluster_id = json.loads(zk.get("/cluster/id")[0])["id"]
    before = {p: zk.get(p)[0] for p in _CLAIM_KEYS}
    with migration_mode_controllers(tmp_path, cluster.connect, cluster_id, FAST_FAILOVER,
                                    node_extra=STAGGERED) as (ports, nodes):
        _kill_standin(point, cluster.connect, zk, ports, tmp_path)
        leader = _wait_for_activation(nodes)
        text = leader.log_text()
        logs = "\n".join(c.log_text() for c in nodes)
        assert "Encountered fatal fault" not in logs, logs[-5000:]
        rerun = migrate_through_standin(cluster.connect, ports, tmp_path, broker_wait=0)
        said = _one_line(rerun.stdout + rerun.stderr)
        assert rerun.returncode == 1, said
        journal = tmp_path / "journal" / "journal.json"
        assert f"controller {leader.node_id} leads the KRaft quorum" in said, said
        assert "cannot lead again" in said
        if point in ("pre-copy", "mirror", "after the fence"):
            # Kafka aborted the open migration transaction; the bootstrap stays: PRE_MIGRATION
            assert "Aborting in-progress metadata transaction at offset 6." in text, text[-4000:]
            assert "Loaded ZK migration state of PRE_MIGRATION" in text
            leader.wait_for_log("No registration found for controller 3000", 60)
            phase = {"pre-copy": "precopy", "mirror": "mirror",
                     "after the fence": "fencing"}[point]
            assert f"stopped in phase {phase} (journal {journal})" in said, said
            assert "back at the PRE_MIGRATION bootstrap" in said
            # not a controller in the slot: Kafka 3.9.1 would fold the aborted records back
            # into the image of the controllers Kafka's own migration needs
            # (docs/design/standin-recovery.md)
            assert "Kafka's own migration must not go on from this log" in said, said
            assert "stand-in's slot: node.id" not in said, said
        if point in ("pre-copy", "mirror"):
            # ZooKeeper untouched: its controller still leads, its epoch never moved
            assert {p: zk.get(p)[0] for p in _CLAIM_KEYS} == before
            assert "ZooKeeper was not fenced: its controller (broker 1) still runs" in said, said
            assert "So start over with zk2kraft, in this order: (1)" in said, said
        if point == "after the fence":
            claim = json.loads(zk.get("/controller")[0])
            assert (claim["brokerid"], claim["kraftControllerEpoch"]) == (3000, 1)
            epoch = int(before["/controller_epoch"]) + 1
            assert int(zk.get("/controller_epoch")[0]) == epoch
            assert (f"ZooKeeper IS fenced (/controller claimed by 3000 with kraftControllerEpoch "
                    f"1, /controller_epoch {epoch})") in said, said
            assert "nothing is lost" in said
            assert "So hand ZooKeeper back: stop the KRaft controllers, run `zk2kraft " \
                "rollback" in said, said
            assert (f"each broker's quorum-state names controller {leader.node_id} at "
                    "epoch") in said, said
        if point == "after EndTransaction":
            # Kafka's controller took the migrated log over but ZooKeeper's /migration did not
            # name it yet: its driver refuses to go on (real 3.9.1)
            assert "Loaded ZK migration state of MIGRATION" in text, text[-4000:]
            leader.wait_for_log("KRaft controller indicates an active migration, but the ZK "
                                "state does not", 60)
            done = json.loads(journal.read_text())
            assert "stopped in phase drained" in said, said
            assert (f"This re-run wrote /migration (kraft_metadata_offset "
                    f"{done['last_durable_offset']})") in said, said
            assert f"Restart controller {leader.node_id}" in said
            mig = json.loads(zk.get("/migration")[0])
            assert (mig["kraft_controller_id"], mig["kraft_metadata_offset"]) == (
                3000, done["last_durable_offset"])
            # the advice: restart the active controller; the next active one claims ZooKeeper
            leader.stop()
            leader.launch()
            leader.wait_started()
            claim = wait_for_kraft_claim(zk, 120)
            logs = "\n".join(c.log_text() for c in nodes)
            assert claim.get("kraftControllerEpoch", -1) > 1, logs[-6000:]
            claimer = next(c for c in nodes if c.node_id == claim["brokerid"])
            claimer.wait_for_log(r"transitioning from \w+ to DUAL_WRITE state", 120)
            assert "ZK_MIGRATION state" not in claimer.log_text()
        assert "Encountered fatal fault" not in "\n".join(c.log_text() for c in nodes)
    if point == "after the fence":
        # the advice, controllers stopped: the printed rollback hands ZooKeeper back (the
        # brokers' part is rehearsed with real brokers in test_standin_killed_brokers.py)
        m = re.search(r"run `zk2kraft rollback ([^`]+)`", said)
        assert m is not None, said
        back = subprocess.run([sys.executable, "-m", "migrate.cli", "rollback",
                               *m.group(1).split()], capture_output=True, text=True, timeout=120)
        assert back.returncode == 0, back.stdout + back.stderr
        assert "rolled back: removed /controller, /migration" in back.stdout, back.stdout
        assert zk.exists("/controller") is None and zk.exists("/migration") is None
        # never lowered below the fence's epoch (ZooKeeper's next controller goes above it)
        assert int(zk.get("/controller_epoch")[0]) >= int(before["/controller_epoch"]) + 1
    if point == "after EndTransaction":
        # nothing lost: a real controller's own log holds ZooKeeper's metadata (parity)
        verify_voter_dir(cluster.connect, ports, 3001, tmp_path / "meta3001")


def test_standin_killed_after_the_fence_rerun_at_once_leads_again_and_hands_over(
    sample_cluster: Callable[..., Any], tmp_path: Path
) -> None:
    """kill -9 right after the fence, re-run at once: no real controller has won an election
    yet (their fetch timeout is 30 s here), so the re-run wins a new epoch, finishes the drain
    and /migration, and hands over; a real controller claims ZooKeeper and its own log holds
    ZooKeeper's metadata (parity), with ZooKeeper fenced exactly once."""
    cluster = sample_cluster(SampleSpec.clean(topics=5, partitions_per_topic=3))
    zk = cluster.client
    cluster_id = json.loads(zk.get("/cluster/id")[0])["id"]
    epoch_before = int(zk.get("/controller_epoch")[0])
    with migration_mode_controllers(tmp_path, cluster.connect, cluster_id) as (ports, nodes):
        _kill_standin("after the fence", cluster.connect, zk, ports, tmp_path)
        rerun = migrate_through_standin(cluster.connect, ports, tmp_path, broker_wait=0)
        said = _one_line(rerun.stdout + rerun.stderr)
        logs = "\n".join(c.log_text() for c in nodes)
        assert rerun.returncode == 0, said + logs[-5000:]
        assert "stand-in 3000 leads the quorum at epoch 2" in said, said
        assert "the previous run's fence had applied (read back); finishing the drain" in said
        doc = json.loads((tmp_path / "m.json").read_text())
        assert doc["handover"]["new_leader"] in (3001, 3002)
        claim = wait_for_kraft_claim(zk, 120)
        logs = "\n".join(c.log_text() for c in nodes)
        assert claim.get("kraftControllerEpoch", -1) > 1, logs[-5000:]
        claimer = next(c for c in nodes if c.node_id == claim["brokerid"])
        assert "Loaded ZK migration state of MIGRATION" in claimer.log_text()
        assert "Encountered fatal fault" not in logs
    assert doc["fence"]["controller_epoch"] == epoch_before + 1  # fenced once: read back
    verify_voter_dir(cluster.connect, ports, 3001, tmp_path / "meta3001")
