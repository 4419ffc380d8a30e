"""The online run's phases: the state machine (here) and one module per phase, which the driver
(`migrate.online.run`) calls in turn over the state they share (`context.RunContext`):
`precopy`, `mirror`, `cutover` (fence, drain, `/migration`) and `handoff`; `resume` reads back,
for a re-run, whether a fence an earlier run sent applied.

Each phase's handler returns its outcome as a value (`Step`): `Advance` (the next phase and what
the journal saves with it) or `Stop` (the run ends without a phase change: refused). The driver
alone journals a phase change (`Journal.enter`), in one place, and then runs the next handler;
that is Kafka's `KRaftMigrationDriver` shape (a state enum, a transition table, one handler per
state).

The phases and the transitions between them are kept as Kafka's `KRaftMigrationDriver` keeps its
`MigrationDriverState`: an enum and a table of valid next states.

The journal (`journal.Journal`) persists the phase by its value (`"precopy"`, ...: the strings
journals have always held, so a journal written before the enum existed resumes as it was
written). A change of phase goes through `check_transition`; a pair the table does not list is
a bug in the run, raised at once (`IllegalTransitionError`) before anything is written.

The phases progress in declaration order except for one step back: a re-run that reads back
"not applied" for a fence an earlier run sent returns to `mirror` and mirrors again before it
fences (`reached` compares by that order: a journal at `fencing` has reached `mirror`).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["TRANSITIONS", "Advance", "IllegalTransitionError", "Phase", "Step", "Stop",
           "check_transition"]


class Phase(enum.StrEnum):
    """Where the run is; each value is what the journal holds (module docstring)."""

    PRECOPY = "precopy"  # the live logs are being written inside the open transaction
    MIRROR = "mirror"  # the pre-copy is durable; notifications are being mirrored
    FENCING = "fencing"  # the fence multi-op may have been sent (its claim is journaled)
    FENCED = "fenced"  # ZooKeeper is fenced (token journaled); the drain may be partly written
    DRAINED = "drained"  # final delta, ZkMigrationStateRecord and EndTransactionRecord durable
    MIGRATION = "migration"  # /migration names the final offset (a stand-in re-run wrote it)
    HANDOFF = "handoff"  # the stand-in resigns, or --on-cutover is running or ran
    DONE = "done"  # finished; a re-run reports and changes nothing

    def reached(self, other: Phase) -> bool:
        """True when this phase is `other` or comes after it."""
        return _ORDER[self] >= _ORDER[other]


_ORDER = {phase: i for i, phase in enumerate(Phase)}

# Every legal (from, to) pair; the comment says which step of the run takes it.
TRANSITIONS: Mapping[Phase, frozenset[Phase]] = {
    # the pre-copy is durable on a majority
    Phase.PRECOPY: frozenset({Phase.MIRROR}),
    # FENCING: the claim is journaled before the fence is sent. MIRROR: a re-run at `mirror`
    # holding an earlier run's claims read back "not applied". FENCED: such a claim turned out
    # applied (read back, or found by the resync's judgement)
    Phase.MIRROR: frozenset({Phase.MIRROR, Phase.FENCING, Phase.FENCED}),
    # DRAINED: this run's own fence applied and its drain is durable (no journal write between
    # the fence and the drain: it would sit inside the window). MIRROR: a re-run read back that
    # the fence did not apply; FENCED: it did, or a fence refused because one of our earlier
    # claims holds /controller
    Phase.FENCING: frozenset({Phase.DRAINED, Phase.MIRROR, Phase.FENCED}),
    # the drain's final append is durable
    Phase.FENCED: frozenset({Phase.DRAINED}),
    # MIGRATION: a stand-in re-run that cannot lead wrote /migration; HANDOFF: this run wrote
    # /migration and journals it with the handoff, in one save
    Phase.DRAINED: frozenset({Phase.MIGRATION, Phase.HANDOFF}),
    Phase.MIGRATION: frozenset({Phase.HANDOFF}),
    # HANDOFF: a re-run resumed inside the handoff begins it again
    Phase.HANDOFF: frozenset({Phase.HANDOFF, Phase.DONE}),
    Phase.DONE: frozenset(),
}


class IllegalTransitionError(RuntimeError):
    """A phase change the table does not list: a bug in the run, not an operator's error."""


def check_transition(current: Phase, target: Phase) -> None:
    """Raise unless the run may go from `current` to `target`.

    Raises:
        IllegalTransitionError: the pair is not in `TRANSITIONS`.
    """
    if target not in TRANSITIONS[current]:
        raise IllegalTransitionError(
            f"illegal phase transition {current.value} -> {target.value} (legal from "
            f"{current.value}: {sorted(p.value for p in TRANSITIONS[current]) or 'none'})")


@dataclass(frozen=True, slots=True)
class Advance:
    """A handler's outcome: go to `to`, saving `changes` with it in one journal write.

    Attributes:
        to: the next phase (`TRANSITIONS` must list it).
        changes: the journal fields saved with the phase change (`Journal.enter`).
        then: what the phase does once the change is durable (messages that say it is, the
            test-only crash hooks placed after it), or None.
    """

    to: Phase
    changes: Mapping[str, Any] = field(default_factory=dict)
    then: Callable[[], None] | None = None


@dataclass(frozen=True, slots=True)
class Stop:
    """A handler's outcome: the run ends here, the journal's phase unchanged.

    Attributes:
        reason: "refused": the judgement found blockers (the command exits 1, listing them from
            the outcome's summary); nothing more is written.
    """

    reason: str = "refused"


Step = Advance | Stop
