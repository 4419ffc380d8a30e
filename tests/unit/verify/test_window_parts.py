"""The window's parts: Kafka's migration-driver lines parsed, parts stacked, rendered.

The log lines are a real Kafka 3.9.1 controller's (a takeover of a zk2kraft log in the canary
oracle test), trimmed of the long leadership-state dumps; every expected figure below is the
difference of two of their timestamps, or of two hand-picked clock stamps, worked out by hand.
"""

from __future__ import annotations

import io
import re
from datetime import datetime

from rich.console import Console

from verify import (
    RaftEvent,
    Report,
    election_split,
    kafka_handoff,
    parse_driver_lines,
    parse_raft_lines,
    render_html,
    render_window_parts,
    window_parts,
)

_D = "(org.apache.kafka.metadata.migration.KRaftMigrationDriver)"
OLD_RUN = [  # an earlier start of the same controller, in the same file
    f"[2026-11-23 14:30:00,000] INFO [KRaftMigrationDriver id=3000] 3000 transitioning from "
    f"SYNC_KRAFT_TO_ZK to KRAFT_CONTROLLER_TO_BROKER_COMM state {_D}",
    f"[2026-11-23 14:30:01,000] INFO [KRaftMigrationDriver id=3000] 3000 transitioning from "
    f"KRAFT_CONTROLLER_TO_BROKER_COMM to DUAL_WRITE state {_D}",
]
TAKEOVER = [
    f"[2026-11-23 14:47:42,670] INFO [KRaftMigrationDriver id=3000] 3000 transitioning from "
    f"UNINITIALIZED to INACTIVE state {_D}",
    f"[2026-11-23 14:47:43,841] INFO [KRaftMigrationDriver id=3000] 3000 transitioning from "
    f"INACTIVE to WAIT_FOR_CONTROLLER_QUORUM state {_D}",
    f"[2026-11-23 14:47:43,854] INFO [KRaftMigrationDriver id=3000] 3000 transitioning from "
    f"WAIT_FOR_CONTROLLER_QUORUM to BECOME_CONTROLLER state {_D}",
    "[2026-11-23 14:47:45,418] INFO [KRaftMigrationDriver id=3000] Claimed ZK controller "
    "leadership in 1563304038 ns. Transitioned migration state from ZkMigrationLeadershipState{"
    "kraftControllerId=3000, kraftControllerEpoch=2} to ZkMigrationLeadershipState{"
    f"kraftControllerId=3000, kraftControllerEpoch=2}} {_D}",
    "java.lang.IllegalStateException: a stack trace line, no timestamp",
    "[2026-11-23 14:47:45,500] INFO [QuorumController id=3000] unrelated line "
    "(org.apache.kafka.controller.QuorumController)",
    f"[2026-11-23 14:47:45,819] INFO [KRaftMigrationDriver id=3000] 3000 transitioning from "
    f"BECOME_CONTROLLER to SYNC_KRAFT_TO_ZK state {_D}",
    f"[2026-11-23 14:47:47,875] INFO [KRaftMigrationDriver id=3000] 3000 transitioning from "
    f"SYNC_KRAFT_TO_ZK to KRAFT_CONTROLLER_TO_BROKER_COMM state {_D}",
    f"[2026-11-23 14:47:49,784] INFO [KRaftMigrationDriver id=3000] 3000 transitioning from "
    f"KRAFT_CONTROLLER_TO_BROKER_COMM to DUAL_WRITE state {_D}",
]
FENCE_WALL = datetime(2026, 11, 23, 14, 47, 41, 500000).timestamp()  # local time, as Kafka's


def test_driver_lines_are_parsed_with_their_times() -> None:
    events = parse_driver_lines(TAKEOVER)
    assert [(e.from_state, e.to_state) for e in events] == [
        ("UNINITIALIZED", "INACTIVE"), ("INACTIVE", "WAIT_FOR_CONTROLLER_QUORUM"),
        ("WAIT_FOR_CONTROLLER_QUORUM", "BECOME_CONTROLLER"), (None, None),
        ("BECOME_CONTROLLER", "SYNC_KRAFT_TO_ZK"),
        ("SYNC_KRAFT_TO_ZK", "KRAFT_CONTROLLER_TO_BROKER_COMM"),
        ("KRAFT_CONTROLLER_TO_BROKER_COMM", "DUAL_WRITE")]
    assert {e.node_id for e in events if e.to_state} == {3000}
    # 14:47:42,670 -> 14:47:49,784 is 7.114 s
    assert round((events[-1].at_s - events[0].at_s) * 1000) == 7114


def test_this_cutovers_takeover_is_picked_and_an_earlier_run_ignored() -> None:
    h = kafka_handoff(parse_driver_lines(OLD_RUN + TAKEOVER), not_before_s=FENCE_WALL)
    assert h.node_id == 3000 and h.complete
    parts = window_parts({}, standin=False, handoff=h, log_reason=None).to_json()
    # claimed 45,418 -> broker comm 47,875; broker comm 47,875 -> dual write 49,784
    assert parts["reconcile"]["ms"] == 2457.0
    assert parts["broker_rpcs"]["ms"] == 1909.0
    assert parts["reconcile"]["source"] == parts["broker_rpcs"]["source"] == "controller log"
    # the old run alone is before the fence: nothing of this cutover
    old = kafka_handoff(parse_driver_lines(OLD_RUN), not_before_s=FENCE_WALL)
    assert (old.sync_s, old.broker_comm_s, old.dual_write_s) == (None, None, None)


def test_without_the_claim_line_reconcile_starts_at_sync_kraft_to_zk() -> None:
    lines = [line for line in TAKEOVER if "Claimed" not in line]
    h = kafka_handoff(parse_driver_lines(lines), not_before_s=FENCE_WALL)
    parts = window_parts({}, standin=True, handoff=h, log_reason=None).to_json()
    assert parts["reconcile"]["ms"] == 2056.0  # 45,819 -> 47,875


def test_standin_parts_stack_up_to_the_total() -> None:
    stamps = {"fence": 100.0, "drained": 100.012, "handoff": 100.015, "new_leader": 100.055,
              "claimed": 100.300}
    parts = window_parts(stamps, standin=True, handoff=None, log_reason=None)
    doc = parts.to_json()
    assert list(doc) == ["tool", "migration_znode", "election", "kafka_claim", "reconcile",
                         "broker_rpcs"]
    assert [doc[n]["ms"] for n in ("tool", "migration_znode", "election", "kafka_claim")] == \
        [12.0, 3.0, 40.0, 245.0]
    assert round(sum(p.ms for p, _ in parts.stacked() if p.ms), 6) == 300.0  # t2 - t0
    assert [round(start, 3) for _, start in parts.stacked()] == [0.0, 12.0, 15.0, 55.0]
    for name in ("reconcile", "broker_rpcs"):
        assert doc[name]["ms"] is None and "--controller-log" in doc[name]["reason"]
    assert all(doc[n]["reason"] is None for n in ("tool", "migration_znode", "election"))


def test_voter_dirs_have_no_election_and_a_resumed_run_no_tool() -> None:
    doc = window_parts({"fence": 5.0, "drained": 5.5, "handoff": 5.6, "claimed": 7.6},
                       standin=False, handoff=None, log_reason=None).to_json()
    assert doc["election"]["ms"] is None and "--on-cutover" in doc["election"]["reason"]
    assert doc["kafka_claim"]["ms"] == 2000.0 and doc["tool"]["ms"] == 500.0
    resumed = window_parts({"handoff": 1.0, "claimed": 2.0}, standin=True, handoff=None,
                           log_reason=None).to_json()
    assert resumed["tool"]["ms"] is None and "earlier run" in resumed["tool"]["reason"]
    assert resumed["election"]["ms"] is None and resumed["election"]["reason"]


def test_a_log_without_dual_write_says_which_line_is_missing() -> None:
    h = kafka_handoff(parse_driver_lines(TAKEOVER[:-1]), not_before_s=FENCE_WALL)
    doc = window_parts({}, standin=True, handoff=h, log_reason="c.log: DUAL_WRITE not logged"
                       ).to_json()
    assert doc["reconcile"]["ms"] == 2457.0
    assert doc["broker_rpcs"]["ms"] is None
    assert doc["broker_rpcs"]["reason"].startswith("c.log: DUAL_WRITE not logged: no 'to "
                                                   "DUAL_WRITE state' line")


def _parts_300() -> object:
    return window_parts({"fence": 0.0, "drained": 0.1, "handoff": 0.1, "new_leader": 0.1,
                         "claimed": 0.4}, standin=True, handoff=None, log_reason=None)


def test_terminal_shows_one_stacked_bar_and_a_legend() -> None:
    out = io.StringIO()
    render_window_parts(Console(file=out, width=120, color_system=None), _parts_300(), width=40)
    text = out.getvalue()
    bar = next(line for line in text.splitlines() if line.startswith("  █"))
    # tool 100 ms of 400 measured -> 10 of 40 cells, kafka_claim 300 ms -> 30 cells
    assert bar.strip() == "█" * 10 + "░" * 30
    assert "400.0 ms measured" in text
    assert re.search(r"reconcile\s+n/a", text) and "--controller-log" in text


def test_html_draws_the_parts_as_a_stacked_svg_bar() -> None:
    page = render_html(Report(title="zk2kraft migrate (online)", window=_parts_300()))
    rects = re.findall(r'<rect class="part" data-part="(\w+)" x="([\d.]+)" y="0" '
                       r'width="([\d.]+)"', page)
    # 720 px for 400 ms: tool 0..180, kafka_claim 180..720; zero-length parts are hairlines
    by_name = {n: (float(x), float(w)) for n, x, w in rects}
    assert by_name["tool"] == (0.0, 180.0)
    assert by_name["kafka_claim"] == (180.0, 540.0)
    assert [n for n, _, _ in rects] == ["tool", "migration_znode", "election", "kafka_claim"]
    assert "reconcile" in page and "n/a" in page and "<script" not in page


# --- the election, split with the new leader's Raft lines ---------------------------------
# Lines as a real 3.9.1 controller (3001) logged them in the stand-in rehearsal, the state
# dumps trimmed; the stamps below are hand-picked so that every sub-part is a round figure.
_R = "(org.apache.kafka.raft.QuorumState)"
RAFT = [
    "[2026-11-25 19:08:51,516] INFO [RaftManager id=3001] Attempting durable transition to "
    "CandidateState(localId=3001, localDirectoryId=kqAd-o7RFiXVn1Q_VDbazA,epoch=2, retries=1, "
    f"voteStates={{}}, highWatermark=Optional.empty, electionTimeoutMs=1370) {_R}",
    "[2026-11-25 19:08:51,560] INFO [RaftManager id=3001] Completed transition to "
    "CandidateState(localId=3001, localDirectoryId=kqAd-o7RFiXVn1Q_VDbazA,epoch=2, retries=1, "
    "voteStates={}, highWatermark=Optional.empty, electionTimeoutMs=1370) from "
    "FollowerState(fetchTimeoutMs=30000, epoch=1, leader=3000, leaderEndpoints=Endpoints(), "
    "voters=[3000, 3001, 3002], highWatermark=Optional.empty, "
    f"fetchingSnapshot=Optional.empty) {_R}",
    "[2026-11-25 19:08:51,630] INFO [RaftManager id=3001] Completed transition to "
    "Leader(localReplicaKey=ReplicaKey(id=3001, directoryId=Optional[kqAd-o7RFiXVn1Q_VDbazA]), "
    "epoch=2, epochStartOffset=128, highWatermark=Optional.empty, voterStates={}) from "
    "CandidateState(localId=3001, localDirectoryId=kqAd-o7RFiXVn1Q_VDbazA,epoch=2, retries=1, "
    f"voteStates={{}}, highWatermark=Optional.empty, electionTimeoutMs=1370) {_R}",
    "[2026-11-25 19:08:51,735] INFO [RaftManager id=3002] Completed transition to "
    "Unattached(epoch=2, votedKey=null, voters=[3000, 3001, 3002], electionTimeoutMs=73485, "
    f"highWatermark=Optional.empty) from FollowerState(epoch=1, leader=3000) {_R}",
]
W = datetime(2026, 11, 25, 19, 8, 50).timestamp()  # 19:08:50.000 local, as Kafka's lines
# the run's monotonic clock reads 100.0 at wall W + 0.6 (the handoff)


def _ev(kind: str, node: int, epoch: int, at: float, detail: str | None = None) -> dict:
    """A handover event `at` seconds after the handoff, on both clocks."""
    return {"kind": kind, "node": node, "epoch": epoch, "wall_s": W + 0.6 + at,
            "mono_s": 100.0 + at, "detail": detail}


def _handover(vote: str | None = "granted") -> dict:
    events = [_ev("end_quorum_epoch_sent", 3001, 1, 0.040),
              _ev("end_quorum_epoch_sent", 3002, 1, 0.041),
              _ev("end_quorum_epoch_answered", 3002, 1, 0.600),
              _ev("end_quorum_epoch_answered", 3001, 1, 0.800)]
    if vote is not None:  # Vote decoded at 51.600, answered at 51.612
        events += [_ev("vote_received", 3001, 2, 1.000),
                   _ev("vote_answered", 3001, 2, 1.012, vote)]
    events.append(_ev("begin_quorum_epoch_received", 3001, 2, 1.100))  # 51.700
    return {"new_leader": 3001, "new_epoch": 2, "elapsed_ms": 1060.0, "events": events}


_STAMPS = {"fence": 99.8, "drained": 99.9, "handoff": 100.0, "new_leader": 101.130,
           "claimed": 101.5}


def test_raft_lines_give_the_candidate_and_leader_transitions() -> None:
    events = parse_raft_lines(RAFT + TAKEOVER)
    assert [(e.node_id, e.state, e.epoch) for e in events] == [
        (3001, "CandidateState", 2), (3001, "Leader", 2)]
    assert round((events[1].at_s - events[0].at_s) * 1000) == 70


def test_election_split_with_our_vote_adds_up_to_the_election() -> None:
    split = election_split(_STAMPS, _handover(), parse_raft_lines(RAFT),
                           not_before_s=W + 0.3)
    assert split.reason is None and split.parts is not None
    got = {p.name: round(p.ms, 3) for p in split.parts if p.ms is not None}
    # 50.600 handoff, 50.640 EndQuorumEpoch sent, 51.560 Candidate, 51.600 Vote decoded,
    # 51.612 granted, 51.630 Leader, 51.700 BeginQuorumEpoch decoded, 51.730 new_leader stamp
    assert got == {"before_end_epoch": 40.0, "end_epoch_to_candidate": 920.0,
                   "candidate_to_vote": 40.0, "vote_answer": 12.0, "vote_to_leader": 18.0,
                   "leader_to_begin_epoch": 70.0, "begin_epoch_to_stamp": 30.0}
    assert round(sum(got.values()), 3) == 1130.0  # = election (new_leader - handoff)
    sources = {p.name: p.source for p in split.parts}
    assert sources["before_end_epoch"] == "zk2kraft"
    assert sources["end_epoch_to_candidate"] == "zk2kraft + controller log"


def test_without_our_granted_vote_candidate_to_leader_is_one_part() -> None:
    for vote in (None, "refused"):
        split = election_split(_STAMPS, _handover(vote), parse_raft_lines(RAFT),
                               not_before_s=W + 0.3)
        assert split.parts is not None
        assert [(p.name, round(p.ms or 0, 3)) for p in split.parts] == [
            ("before_end_epoch", 40.0), ("end_epoch_to_candidate", 920.0),
            ("candidate_to_leader", 70.0), ("leader_to_begin_epoch", 70.0),
            ("begin_epoch_to_stamp", 30.0)]


def test_a_leader_elected_before_our_grant_did_not_need_it() -> None:
    # 3001 logs Leader at 51.630; our grant written at 51.650: 3002's grant made the majority
    handover = _handover()
    for event in handover["events"]:
        if event["kind"] == "vote_answered":
            event["wall_s"], event["mono_s"] = W + 0.6 + 1.050, 101.050
    split = election_split(_STAMPS, handover, parse_raft_lines(RAFT), not_before_s=W + 0.3)
    assert split.reason is None and split.parts is not None
    assert [(p.name, round(p.ms or 0, 3)) for p in split.parts] == [
        ("before_end_epoch", 40.0), ("end_epoch_to_candidate", 920.0),
        ("candidate_to_leader", 70.0), ("leader_to_begin_epoch", 70.0),
        ("begin_epoch_to_stamp", 30.0)]


def test_election_split_is_null_with_a_reason_never_a_guess() -> None:
    lines = parse_raft_lines(RAFT)
    no_log = election_split(_STAMPS, _handover(), None, not_before_s=W)
    assert no_log.parts is None and "--controller-log" in (no_log.reason or "")
    given = election_split(_STAMPS, _handover(), None, not_before_s=W,
                           log_reason="c.log: not found")
    assert given.reason == "c.log: not found"
    # the lines are from before this cutover's fence (less 2 s): an older run's
    old = election_split(_STAMPS, _handover(), lines, not_before_s=W + 5.0)
    assert old.parts is None and "CandidateState" in (old.reason or "")
    # the controller's clock 1 s behind ours: its CandidateState line (50.560 on our clock)
    # comes before our EndQuorumEpoch was written (50.640)
    behind = [RaftEvent(e.at_s - 1.0, e.node_id, e.state, e.epoch) for e in lines]
    skew = election_split(_STAMPS, _handover(), behind, not_before_s=W)
    assert skew.parts is None
    assert (skew.reason or "").startswith("end_epoch_to_candidate came out -80.0 ms: the "
                                          "controller's clock and ours disagree")
    nobody = election_split(_STAMPS, {"new_leader": -1, "new_epoch": 1, "events": []}, lines,
                            not_before_s=W)
    assert nobody.parts is None and nobody.reason


def test_split_election_in_json_terminal_and_html() -> None:
    split = election_split(_STAMPS, _handover(), parse_raft_lines(RAFT), not_before_s=W)
    parts = window_parts(_STAMPS, standin=True, handoff=None, log_reason=None, split=split)
    doc = parts.to_json()
    assert list(doc["election"]["parts"]) == [  # type: ignore[arg-type]
        "before_end_epoch", "end_epoch_to_candidate", "candidate_to_vote", "vote_answer",
        "vote_to_leader", "leader_to_begin_epoch", "begin_epoch_to_stamp"]
    assert doc["election"]["parts_reason"] is None
    assert "parts" not in doc["tool"]  # only the election is split
    out = io.StringIO()
    render_window_parts(Console(file=out, width=160, color_system=None), parts, width=40)
    text = out.getvalue()
    # election starts at 200 ms (tool 100 + migration_znode 100); its sub-parts under it
    assert re.search(r"end_epoch_to_candidate\s+920\.0\s+240\.0\s", text), text
    assert re.search(r"begin_epoch_to_stamp\s+30\.0\s+1300\.0\s", text), text
    page = render_html(Report(title="t", window=parts))
    subs = re.findall(r'<rect class="sub" data-part="election\.(\w+)"', page)
    assert subs[:2] == ["before_end_epoch", "end_epoch_to_candidate"] and len(subs) == 7
    nosplit = window_parts(_STAMPS, standin=True, handoff=None, log_reason=None,
                           split=election_split(_STAMPS, _handover(), None, not_before_s=W))
    out = io.StringIO()
    render_window_parts(Console(file=out, width=160, color_system=None), nosplit, width=40)
    assert re.search(r"split\s+n/a\s+no --controller-log", out.getvalue())


def test_the_wait_for_followers_is_its_own_sub_part_when_stamped() -> None:
    handover = _handover()
    handover["events"].insert(0, _ev("followers_at_end", -1, 1, 0.025))  # at 50.625
    split = election_split(_STAMPS, handover, parse_raft_lines(RAFT), not_before_s=W)
    assert split.parts is not None
    got = [(p.name, round(p.ms or 0, 3)) for p in split.parts]
    assert got[:3] == [("followers_catch_up", 25.0), ("end_epoch_write", 15.0),
                       ("end_epoch_to_candidate", 920.0)]
    assert round(sum(ms for _, ms in got), 3) == 1130.0
