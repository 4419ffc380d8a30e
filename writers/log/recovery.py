"""Finish or undo what a killed staging run left (`writers.log.staging`'s two phases).

The next run, holding the locks, calls `recover_interrupted` first: if any staging dir of the
run carries `PROMOTE`, the promotion is finished for every voter named in it (all staged copies
were complete before the first marker was written); otherwise every staging copy is removed.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from writers.errors import (
    VoterStateError,
    VoterUnavailableError,
)
from writers.log.reader import (
    METADATA_PARTITION_DIR,
)
from writers.log.staging import PROMOTE_MARKER, StagedVoter, promote_one, remove_staging

__all__ = ["InterruptedStaging", "interrupted_staging", "recover_interrupted"]


def _read_json(path: Path) -> object:
    try:
        return json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None


@dataclass(frozen=True, slots=True)
class InterruptedStaging:
    """What a killed run left in one voter's staging dir, as read without changing it.

    Attributes:
        voter: the voter whose directory holds `.zk2kraft-staging`.
        committed: a `PROMOTE` marker is there: the promotion was committed, and the next run
            finishes it for every voter in `named` (`recover_interrupted`).
        log_staged: the staged `__cluster_metadata-0` is still there (not yet moved into place).
        named: the voter directories the marker names (empty without one).
    """

    voter: StagedVoter
    committed: bool
    log_staged: bool
    named: tuple[str, ...]


def interrupted_staging(voters: Sequence[StagedVoter]) -> list[InterruptedStaging]:
    """Read, without changing anything, what `recover_interrupted` would find (for `plan`).

    Only meaningful while no run holds the voters' locks (a running one is staging right now).
    """
    out: list[InterruptedStaging] = []
    for v in voters:
        if not v.staging.is_dir():
            continue
        marker = _read_json(v.staging / PROMOTE_MARKER)
        named = (tuple(str(entry[1]) for entry in marker
                       if isinstance(entry, list) and len(entry) == 2)
                 if isinstance(marker, list) else ())
        out.append(InterruptedStaging(v, isinstance(marker, list),
                                      (v.staging / METADATA_PARTITION_DIR).is_dir(), named))
    return out


def recover_interrupted(voters: Sequence[StagedVoter]) -> list[str]:
    """Finish or undo what a killed run left in these voters' staging dirs.

    Holding the voters' locks, call this before looking at what the voters hold. With a
    `PROMOTE` marker in any staging dir, the interrupted promotion is finished for every
    voter it names; without one, every staging copy is removed (none was promoted).

    Returns:
        One line per action taken, for the log and the operator.

    Raises:
        VoterStateError: the interrupted promotion named a voter directory that is not in
            this run (run again with the same `--voter` flags to finish it) (exit 1).
        VoterUnavailableError: a staging dir cannot be read, moved or removed (exit 3).
    """
    left = [v for v in voters if v.staging.exists()]
    if not left:
        return []
    done: list[str] = []
    try:
        named: list[list[object]] | None = None
        for v in left:
            marker = _read_json(v.staging / PROMOTE_MARKER)
            if isinstance(marker, list):
                named = marker
                break
        if named is None:
            for v in left:
                remove_staging(v.staging)
                done.append(f"voter {v.node_id}: removed the incomplete staging copy "
                            f"{v.staging} of an interrupted run (no voter had been changed)")
            return done
        by_path = {str(v.path): v for v in voters}
        missing = [str(p) for _, p in named if str(p) not in by_path]
        if missing:
            raise VoterStateError(
                "an interrupted run was promoting a metadata log into "
                f"{', '.join(str(p) for _, p in named)} and was stopped half way; run "
                "migrate again with the same --voter flags to finish it (not in this run: "
                f"{', '.join(missing)})"
            )
        group = [by_path[str(p)] for _, p in named]
        for v in group:
            if v.staging.exists() and promote_one(v).log:
                done.append(f"voter {v.node_id}: finished the interrupted promotion of its "
                            "staged metadata log")
        for v in group:
            remove_staging(v.staging)
        for v in left:
            if v not in group:
                remove_staging(v.staging)
                done.append(f"voter {v.node_id}: removed the stale staging copy {v.staging}")
    except OSError as exc:
        raise VoterUnavailableError(
            f"cannot recover the staging copy of an interrupted run: "
            f"{exc.filename or ''}: {exc.strerror or exc}") from exc
    if not done:
        done.append("removed the staging copies of an interrupted run that had already "
                    "promoted every voter")
    return done
