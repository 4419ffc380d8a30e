"""What a fresh `migrate --standin` says when a controller stood for election before the
stand-in asked (issue 30, finding 2): who leads at what epoch, that the brokers follow it, and
the way out; never "start controllers with a long election timeout". Expected sentences are
written out by hand."""

from __future__ import annotations

import json
from pathlib import Path

from migrate.flags.standin import StandInSpec
from migrate.online.takeover import explain_led_first, explain_recorded_leader
from writers import QuorumLedElsewhereError
from zkreader import FenceState, MigrationZnode, ZnodeStat

ZK = "zk1:2181/kafka"
SPEC = StandInSpec(3000, ("10.0.0.9", 9093), Path("/var/lib/zk2kraft/meta"),
                   {3000: ("10.0.0.9", 9093), 3001: ("c1", 9093), 3002: ("c2", 9093)})
JOURNAL = "/var/lib/zk2kraft/.zk2kraft-journal/journal.json"


def _state(controller: dict[str, object], migration: dict[str, object] | None) -> FenceState:
    return FenceState(controller_epoch=7, epoch_zk_version=6,
                      controller=json.dumps(controller).encode(), controller_zk_version=0,
                      controller_ephemeral=True,
                      migration=None if migration is None else json.dumps(migration).encode(),
                      migration_zk_version=None if migration is None else 1)


def _said(leader: int, epoch: int, state: FenceState) -> str:
    exc = QuorumLedElsewhereError("refused", voter_id=3001, leader_id=leader, leader_epoch=epoch)
    return explain_led_first(exc, state, SPEC, connect=ZK, journal_path=JOURNAL)


def test_a_controller_that_led_first_with_zookeeper_still_in_charge_gets_the_start_over() -> None:
    said = _said(3002, 3, _state({"version": 2, "brokerid": 1, "timestamp": "1"},
                                 {"version": 0, "kraft_controller_id": 3002,
                                  "kraft_controller_epoch": 3, "kraft_metadata_offset": -1,
                                  "kraft_metadata_epoch": -1}))
    assert said.startswith(
        "zk2kraft's stand-in 3000 cannot lead: controller 3002 leads the KRaft quorum at epoch 3 "
        "(voter 3001 answered the stand-in's vote request so). A controller was started before "
        "zk2kraft asked for votes, or too long before: its controller.quorum.election.timeout.ms "
        "ran out and it stood for election without the stand-in")
    assert ("The brokers in migration mode fetch from the leader as Raft observers: they follow "
            "controller 3002 at epoch 3 in their own __cluster_metadata-0.") in said
    assert "ZooKeeper was not fenced and nothing was migrated" in said
    steps = ["(1) stop every KRaft controller (and zk2kraft), then read /migration "
             f"(`zookeeper-shell {ZK} get /migration`)",
             f"delete it (`zookeeper-shell {ZK} delete /migration`)",
             "(2) re-format each controller's metadata.log.dir",
             f"(3) empty /var/lib/zk2kraft/meta and remove {JOURNAL}",
             "(4) the brokers in migration mode follow controller 3002 at epoch 3",
             "with the controllers still stopped, roll the brokers one at a time: each stopped, "
             "its __cluster_metadata-0 directory deleted",
             "(5) run this command again and, once it listens on its slot, start the "
             "controllers within the 120 s"]
    at = [said.index(s) for s in steps]
    assert at == sorted(at), said
    assert "start controllers with a long" not in said


def test_a_candidate_without_a_leader_yet_is_named_by_its_epoch() -> None:
    said = _said(-1, 2, _state({"version": 1, "brokerid": 1, "timestamp": "1"}, None))
    assert ("cannot lead: a controller stood for election at epoch 2 (no leader known yet)"
            in said)
    assert "they follow whoever wins in their own __cluster_metadata-0" in said
    assert "(4) the brokers in migration mode follow the leader of the discarded quorum" in said


def test_kafkas_own_migration_under_way_is_named_with_both_ways_on() -> None:
    said = _said(3002, 3, _state({"version": 2, "brokerid": 3002, "timestamp": "1",
                                  "kraftControllerEpoch": 3},
                                 {"version": 0, "kraft_controller_id": 3002,
                                  "kraft_controller_epoch": 3, "kraft_metadata_offset": 412,
                                  "kraft_metadata_epoch": 3}))
    assert ("Kafka's own migration is under way: controller 3002 claimed /controller with "
            "kraftControllerEpoch 3 and /migration names its log up to offset 412") in said
    assert ("To let it finish: start a real KRaft controller in the stand-in's slot: "
            "node.id=3000, its controller listener at 10.0.0.9:9093") in said
    assert f"delete /controller (`zookeeper-shell {ZK} delete /controller`)" in said
    assert ("then roll the brokers one at a time: each stopped, its __cluster_metadata-0 "
            "directory deleted") in said
    assert "ZooKeeper was not fenced" not in said


def test_voters_following_an_earlier_run_of_the_standin_are_not_called_a_controller() -> None:
    said = _said(3000, 1, _state({"version": 1, "brokerid": 1, "timestamp": "1"}, None))
    assert said.startswith(
        "zk2kraft's stand-in 3000 cannot lead: voter 3001 follows stand-in 3000 itself at epoch "
        "1, an earlier zk2kraft run that led this quorum, and there is no journal at "
        f"{JOURNAL} to resume it.")
    assert "controller 3000 leads" not in said
    assert "(4) the brokers in migration mode follow controller 3000 at epoch 1" in said


def _migration(epoch: int, offset: int) -> MigrationZnode:
    return MigrationZnode(kraft_controller_id=-1, kraft_controller_epoch=epoch,
                          kraft_metadata_offset=offset, kraft_metadata_epoch=-1,
                          stat=ZnodeStat(czxid=1, mzxid=2, version=1, ctime_ms=0, mtime_ms=0))


def test_a_leader_recorded_in_migration_before_the_run_read_it_gets_the_same_way_out() -> None:
    # real 3.9.1: the controller that became active wrote controller -1, epoch 2, offset -1
    said = explain_recorded_leader(_migration(2, -1), SPEC, connect=ZK, journal_path=JOURNAL)
    assert said is not None
    assert said.startswith(
        "/migration records a KRaft controller that became active at epoch 2 with nothing "
        "migrated (metadata offset -1): a controller was started before zk2kraft asked for "
        "votes, or too long before")
    steps = ["The brokers in migration mode follow that controller in their own "
             "__cluster_metadata-0.",
             "ZooKeeper was not fenced and nothing was migrated.",
             f"(1) stop every KRaft controller (and zk2kraft), then read /migration "
             f"(`zookeeper-shell {ZK} get /migration`)",
             f"(3) empty /var/lib/zk2kraft/meta and remove {JOURNAL}",
             "(4) the brokers in migration mode follow the leader of the discarded quorum",
             "its __cluster_metadata-0 directory deleted",
             "(5) run this command again"]
    at = [said.index(s) for s in steps]
    assert at == sorted(at), said


def test_a_migration_znode_that_names_migrated_data_keeps_the_plain_blocker() -> None:
    # offset 120: a controller migrated data; the empty one (all -1) is not a blocker at all
    assert explain_recorded_leader(_migration(2, 120), SPEC, connect=ZK,
                                   journal_path=JOURNAL) is None
    assert explain_recorded_leader(_migration(-1, -1), SPEC, connect=ZK,
                                   journal_path=JOURNAL) is None
