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
    Report,
    kafka_handoff,
    parse_driver_lines,
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
