"""What the stand-in reports of a handover: each message, stamped, and who leads after it."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["HandoverEvent", "HandoverResult"]


@dataclass(frozen=True, slots=True)
class HandoverEvent:
    """One message of the handover, stamped on both clocks as it happened.

    The wall-clock time (`time.time()`) lets the run line these up with the new leader's own
    log lines (`CandidateState`, `Leader`); the monotonic one with the run's other stamps.

    Attributes:
        kind: `followers_at_end` (every follower fetched up to the log's end, node -1;
            `detail` names those still behind if it gave up), `end_quorum_epoch_sent` (written
            to the voter's socket),
            `end_quorum_epoch_answered` (its response read, or the error), `vote_received` (a
            candidate's Vote request decoded), `vote_answered` (our answer about to be
            written), `begin_quorum_epoch_received` (a new leader's BeginQuorumEpoch decoded,
            before the stand-in writes its quorum-state).
        node: the voter the message went to or came from.
        epoch: the epoch it carried (ours for EndQuorumEpoch, the candidate's or leader's else).
        wall_s: `time.time()` when it happened.
        mono_s: `time.monotonic()` when it happened.
        detail: `granted`/`refused` for a vote answer, the error for a failed EndQuorumEpoch,
            else None.
    """

    kind: str
    node: int
    epoch: int
    wall_s: float
    mono_s: float
    detail: str | None = None

    def to_json(self) -> dict[str, object]:
        return {"kind": self.kind, "node": self.node, "epoch": self.epoch,
                "wall_s": round(self.wall_s, 6), "mono_s": round(self.mono_s, 6),
                "detail": self.detail}


@dataclass(frozen=True, slots=True)
class HandoverResult:
    """How leadership passed to a real controller.

    Attributes:
        new_leader: the node that announced itself (BeginQuorumEpoch), or -1 if none did.
        new_epoch: its epoch.
        elapsed_ms: from sending EndQuorumEpoch to its BeginQuorumEpoch reaching the stand-in.
        events: every EndQuorumEpoch, Vote and BeginQuorumEpoch of the handover, in order.
        fetches_answered: Fetch requests answered from resigning to the new leader's
            BeginQuorumEpoch (each one the voters and observers sent us in that time).
    """

    new_leader: int
    new_epoch: int
    elapsed_ms: float
    events: tuple[HandoverEvent, ...] = ()
    fetches_answered: int = 0
