"""`--controller-log`: the controller's server log followed incrementally until DUAL_WRITE.

The lines are a real Kafka 3.9.1 controller's (see tests/unit/verify/test_window_parts.py).
"""

from __future__ import annotations

from pathlib import Path

from migrate.online.window_report import follow_controller_logs
from tests.unit.verify.test_window_parts import FENCE_WALL, RAFT, TAKEOVER


def test_followed_log_is_read_incrementally_until_dual_write(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text("\n".join(TAKEOVER[:4]) + "\n" + TAKEOVER[6][:30])  # a half-written line
    rest = "".join(TAKEOVER[6][30:] + "\n" + line + "\n" for line in TAKEOVER[7:])
    now = [0.0]

    def sleep(s: float) -> None:  # the controller writes on while we wait
        now[0] += s
        with log.open("a") as f:
            f.write(rest)

    h, reason = follow_controller_logs([tmp_path / "absent.log", log], fence_wall_s=FENCE_WALL,
                                       timeout_s=10, clock=lambda: now[0], sleep=sleep)
    assert reason is None and h is not None and h.complete
    assert round((h.dual_write_s - h.broker_comm_s) * 1000) == 1909
    assert now[0] == 0.2  # one wait: the second read found DUAL_WRITE
    none, why = follow_controller_logs([tmp_path / "absent.log"], fence_wall_s=FENCE_WALL,
                                       timeout_s=0, clock=lambda: 0.0, sleep=sleep)
    assert none is None and why is not None and "absent.log: not found" in why


def test_followed_logs_hand_back_their_raft_transitions(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text("\n".join(RAFT + TAKEOVER) + "\n")
    raft: list = []
    h, reason = follow_controller_logs([log], fence_wall_s=FENCE_WALL, timeout_s=0,
                                       clock=lambda: 0.0, sleep=lambda s: None, raft=raft)
    assert reason is None and h is not None and h.complete
    assert [(r.node_id, r.state, r.epoch) for r in raft] == [
        (3001, "CandidateState", 2), (3001, "Leader", 2)]
