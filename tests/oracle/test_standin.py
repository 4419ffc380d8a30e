"""Real Kafka 3.9.1 controllers follow zk2kraft's stand-in leader (issue 9's foundation).

Controllers 3001 and 3002 run with static voters `3000@…,3001@…,3002@…`; zk2kraft answers as 3000
(`writers.StandInLeader`). Checked with Kafka's own tools and logs, never with our decoder:
* both controllers log `Completed transition to FollowerState(… leader=3000 …)`;
* a log that `zk2kraft migrate` wrote from a real ZooKeeper is appended through the stand-in;
  once committed, DumpLogSegments on each controller's own directory prints the same records,
  payload for payload, as on the migrated segment, one offset later (the stand-in's epoch opens
  with its LeaderChange record), and their segments start with the stand-in's bytes exactly;
* EndQuorumEpoch hands leadership to a real controller at epoch 2, which activates on the
  migrated log (`Loaded ZK migration state of MIGRATION`) and the other controller follows it;
* after resigning, the stand-in answers ControllerRegistration with NOT_CONTROLLER, so the
  controllers register with the real leader (it logs their registrations).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from samples import SampleSpec
from tests.support.kafka import dump_log, dump_log_batches, dump_log_payloads
from tests.support.standin import (
    LONG_ELECTION,
    follower_segments,
    standin_quorum,
    transitions,
)
from writers import EncodedBatch, scan_frames

pytestmark = [pytest.mark.oracle, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]


def _migrated_log(sample_cluster: Callable[..., Any], where: Path) -> Path:
    """`zk2kraft migrate --cutover none` of a real ZooKeeper tree into one voter directory."""
    sample = sample_cluster(SampleSpec.clean())
    proc = subprocess.run(
        [sys.executable, "-m", "migrate.cli", "migrate", "--zookeeper", sample.connect,
         f"--voter=3000={where}", "--cutover", "none", "--spark-master", "in-process", "--quiet"],
        capture_output=True, text=True, cwd=ROOT, check=False, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [segment] = follower_segments(where)
    return segment


def _batches(segment: Path) -> list[EncodedBatch]:
    data = segment.read_bytes()
    return [EncodedBatch(h.base_offset, h.last_offset, h.leader_epoch,
                         data[h.position:h.position + h.size])
            for h in scan_frames(data, file=str(segment))]


def test_real_controllers_follow_the_standin_replicate_a_migrated_log_and_take_over(
    sample_cluster: Callable[..., Any], tmp_path: Path
) -> None:
    migrated = _migrated_log(sample_cluster, tmp_path / "migrated")
    source = _batches(migrated)
    kafka_view = dump_log_payloads(migrated)  # Kafka's decoding of the migrated segment
    assert len(kafka_view) > 20

    with standin_quorum(tmp_path / "quorum") as q:
        standin = q.standin
        assert standin.leader_epoch == 1
        assert standin.next_offset == 1  # offset 0: the LeaderChange that opens epoch 1
        shift = standin.next_offset - source[0].base_offset
        moved = [EncodedBatch(b.base_offset + shift, b.last_offset + shift, b.leader_epoch,
                              b.data) for b in source]
        result = standin.append_batches(moved)  # returns once committed by a majority
        assert result.last_offset == source[-1].last_offset + shift
        assert standin.durable_offset == result.last_offset
        end = result.last_offset + 1
        standin.wait_committed(result.last_offset)

        handover = standin.resign()
        assert handover.new_leader in (3001, 3002) and handover.new_epoch == 2
        leader = q.controller(handover.new_leader)
        other = q.controller(3003 - handover.new_leader + 3000)
        leader.wait_for_log(r"Loaded ZK migration state of MIGRATION", 60)
        other.wait_for_log(r"Completed transition to FollowerState\([^\n]*epoch=2, leader="
                           + str(handover.new_leader), 60)
        # registered with the real leader after the stand-in answered NOT_CONTROLLER
        for n in (3001, 3002):
            leader.wait_for_log(rf"Replayed RegisterControllerRecord[^\n]*id={n}\b", 60)
        served = dict(standin.requests_served)
        ours = follower_segments(q.standin_dir)[0].read_bytes()

    assert served.get("ControllerRegistration", 0) >= 1 and served.get("Fetch", 0) >= 2
    for node in q.controllers:
        assert transitions(node)[:1] in (["Unattached"], ["FollowerState"]), transitions(node)
        assert "FollowerState" in transitions(node)
        assert "leader=3000" in node.log_text()

        segment = follower_segments(node.metadata_log_dir)[0]
        theirs = segment.read_bytes()
        assert theirs.startswith(ours), f"node {node.node_id}: its log does not start with ours"
        dumped = dump_log(segment)
        batches = dump_log_batches("", text=dumped)
        assert all(b.valid for b in batches)
        assert batches[0].is_control and batches[0].leader_epoch == 1
        assert "LEADER_CHANGE" in batches[0].records[0]
        ours_range = [b for b in batches if b.base_offset < end]
        assert all(b.leader_epoch == 1 for b in ours_range)
        later = [b for b in batches if b.base_offset >= end]
        assert later and later[0].leader_epoch == 2  # the real leader's epoch follows
        payloads = [p for p in dump_log_payloads("", text=dumped) if p["offset"] < end]
        assert [{**p, "offset": p["offset"] - shift} for p in payloads] == kafka_view


def test_after_the_handover_a_real_controller_3000_takes_the_standins_slot_and_directory(
    tmp_path: Path,
) -> None:
    """kraft.version 0 (static voters): the slot goes back to a real controller of the same id.

    It starts on the stand-in's own `metadata.log.dir` (meta.properties, quorum-state and the
    log the stand-in persisted), on the stand-in's address, follows the real leader and catches
    up: at the end its log holds the same batches as the leader's.
    """
    from tests.support.kafka import KafkaController
    from writers import MetadataRecord

    with standin_quorum(tmp_path) as q:
        records = [MetadataRecord("FEATURE_LEVEL_RECORD", 0,
                                  {"name": "metadata.version", "featureLevel": 21})]
        records += [MetadataRecord("NO_OP_RECORD", 0, {}) for _ in range(50)]
        q.standin.append_records(records, timestamp_ms=1_700_000_000_000)
        handover = q.standin.resign()
        assert handover.new_leader in (3001, 3002)
        leader = q.controller(handover.new_leader)
        leader.wait_for_log(r"Becoming the active controller", 60)
        port = q.standin.listen[1]
        q.standin.close()
        # the same configuration as the other controllers: with a shorter election timeout and a
        # log behind theirs it would stand for election again and again, each higher-epoch Vote
        # resetting their (long) timers, and nobody would lead (seen: epoch 36 within a minute)
        real = KafkaController(tmp_path / "node3000", q.standin_dir, node_id=3000,
                               quorum=q.controllers[0].quorum, heap="256m", extra=LONG_ELECTION)
        with real:
            real.wait_for_log(r"Completed transition to FollowerState\([^\n]*epoch=2, leader="
                              + str(handover.new_leader), 60)
            leader.wait_for_log(r"Replayed RegisterControllerRecord[^\n]*id=3000\b", 90)
            assert real.controller_port == port
        for c in q.controllers:
            c.stop()
        theirs = follower_segments(leader.metadata_log_dir)[0]
        ours = follower_segments(q.standin_dir)[0]
        leader_batches = dump_log_batches(theirs)
        real_batches = dump_log_batches(ours)
    # the real 3000 holds everything the leader held when it registered (it may trail the
    # leader's last NoOp records by the time both stopped)
    assert len(real_batches) >= 3
    common = min(len(real_batches), len(leader_batches))
    assert [(b.base_offset, b.leader_epoch, b.crc) for b in real_batches[:common]] == [
        (b.base_offset, b.leader_epoch, b.crc) for b in leader_batches[:common]]
    assert any(b.leader_epoch == 2 for b in real_batches)  # caught up past the stand-in's epoch
