"""The online migration's journal: where a crashed run stopped, so a re-run resumes there.

One small JSON file, replaced atomically (temp file, fsync, rename, directory fsync) at every
phase change and after every durable append, so after a kill -9 it names either the old or the
new state, never half of one. By default it lives beside the voters (`<parent of the first
voter dir>/.zk2kraft-journal/`, 0700), not inside a voter dir, where Kafka would find a
stranger: the same flags find it again (the re-run, `rollback`), and it goes when the operator
clears the voters' parent. It shares that filesystem with the first voter, so `--journal` on
another filesystem keeps a run going when that voter's disk fills (the quorum drops the voter).

A journal that cannot be written stops the run at once (`JournalWriteError`, exit 3), exactly as
a kill -9 at that point would: the file still holds the last state written, which the re-run
resumes from. Every journal write that precedes a ZooKeeper write precedes it in time too (the
`fencing` entry is saved before the fence is sent), so a failure before the fence leaves
ZooKeeper untouched; after it, the message says ZooKeeper is fenced and how to finish or roll
back.

Phases (`phase.Phase`, persisted by value; `phase.TRANSITIONS` lists the legal changes), in
order:
    precopy   the live logs are being written inside the open transaction
    mirror    the pre-copy is durable; notifications are being mirrored
    fencing   the fence multi-op may have been sent (its exact `/controller` claim is here, so a
              resume reads back whether it applied and never fences twice)

Every claim any run of this migration wrote at `fencing` stays in `claims`, not only the latest:
a fence sent by a killed run can still be in flight when a re-run reads back "not applied", and
apply later, before or instead of the re-run's own (both check `/controller_epoch` at the same
version, so at most one applies). Its claim is then in `/controller`, and only this list tells it
from another KRaft controller's.
    fenced    ZooKeeper is fenced (token here); the drain may be partly written
    drained   the final delta, ZkMigrationStateRecord and EndTransactionRecord are durable
    migration `/migration` holds the final offset and epoch (a run that writes it journals
              it with `handoff`, in one save; a resume treats the two alike)
    handoff   the stand-in resigns, or `--on-cutover` is running or ran
    done      finished; a re-run reports and changes nothing
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from migrate.errors import BadFlagError, JournalWriteError
from migrate.online.phases import IllegalTransitionError, Phase, check_transition
from writers import atomic_write

__all__ = ["JOURNAL_FILE", "Journal", "check_journal_dir", "default_journal_dir"]

JOURNAL_FILE = "journal.json"


def default_journal_dir(first_voter: Path) -> Path:
    """Beside the voters: `<parent of the first voter dir>/.zk2kraft-journal`."""
    return first_voter.parent / ".zk2kraft-journal"


def _os_error(exc: OSError) -> str:
    """`ENOSPC: No space left on device`: the errno's name and its text."""
    name = errno.errorcode.get(exc.errno or 0, f"errno {exc.errno}")
    return f"{name}: {exc.strerror or exc}"


def check_journal_dir(directory: Path, flag: str) -> None:
    """Fail early (exit 2, naming the flag) if the journal could not be kept in `directory`.

    Creates nothing that stays: a probe file in an existing directory, or a probe directory in
    the nearest existing ancestor of a missing one, removed at once (`os.access` is not enough:
    root passes it on a read-only filesystem or in /proc).

    Raises:
        BadFlagError: `directory` (or an ancestor) is a file, or nothing can be created there.
    """
    existing = directory
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise BadFlagError(f"{flag} {directory}: {existing} is not a directory")
    if existing == directory and (directory / JOURNAL_FILE).exists() and \
            not (directory / JOURNAL_FILE).is_file():
        raise BadFlagError(f"{flag} {directory}: {directory / JOURNAL_FILE} is not a file")
    probe = existing / f".zk2kraft-journal-probe.{os.getpid()}"
    try:
        if existing == directory:
            os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
            os.unlink(probe)
        else:
            os.mkdir(probe, 0o700)
            os.rmdir(probe)
    except OSError as exc:
        raise BadFlagError(f"{flag} {directory}: the journal cannot be kept there: cannot "
                           f"create {'a file' if existing == directory else 'a directory'} in "
                           f"{existing} ({_os_error(exc)})") from None


@dataclass
class Journal:
    """The journal's content (see the module docstring); `save` writes it atomically.

    Attributes:
        directory: where `journal.json` lives.
        phase: the last phase entered (changed only through `enter`).
        cluster_id: ZooKeeper's cluster id (a journal for another cluster is refused).
        voters: the voter ids of the run.
        leader_epoch: the epoch the log is written in.
        last_durable_offset: the last offset known durable on a majority.
        claim: the `/controller` bytes of the latest fence (from phase `fencing` on).
        claims: every `/controller` claim a run of this migration wrote at `fencing`, oldest
            first (any of them in `/controller` means one of our fences applied).
        fence: the fence token's JSON (from `fenced` on).
        migration_zk_version: `/migration`'s version after our final write.
        facts: report figures kept across a resume (counts, offsets).
    """

    directory: Path
    phase: Phase = Phase.PRECOPY
    cluster_id: str = ""
    voters: list[int] = field(default_factory=list)
    leader_epoch: int = 1
    last_durable_offset: int = -1
    claim: str | None = None
    claims: list[str] = field(default_factory=list)
    fence: dict[str, Any] | None = None
    migration_zk_version: int | None = None
    facts: dict[str, Any] = field(default_factory=dict)

    @property
    def path(self) -> Path:
        """The journal file."""
        return self.directory / JOURNAL_FILE

    @classmethod
    def load(cls, directory: Path) -> Journal | None:
        """The journal in `directory`, or None when there is none.

        Raises:
            ValueError: the file exists but is not a journal (names the file).
        """
        path = directory / JOURNAL_FILE
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise ValueError(f"{path}: cannot read the journal ({_os_error(exc)})") from None
        try:
            doc = orjson.loads(raw)
            try:
                phase = Phase(doc.get("phase"))
            except ValueError:
                raise ValueError(f"unknown phase {doc.get('phase')!r}") from None
            return cls(directory=directory, phase=phase, cluster_id=doc["cluster_id"],
                       voters=list(doc["voters"]), leader_epoch=int(doc["leader_epoch"]),
                       last_durable_offset=int(doc["last_durable_offset"]),
                       claim=doc.get("claim"), claims=_claims(doc), fence=doc.get("fence"),
                       migration_zk_version=doc.get("migration_zk_version"),
                       facts=dict(doc.get("facts") or {}))
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"{path}: not a zk2kraft journal ({exc})") from None

    def claim_changes(self, claim: str) -> dict[str, Any]:
        """The changes that journal `claim` as the fence about to be sent (entering phase
        `fencing`, before the multi-op leaves), keeping the earlier ones."""
        return {"claim": claim, "claims": [*self.claims, claim]}

    def at_least(self, phase: Phase) -> bool:
        """True when the journal has reached `phase` (`Phase.reached`)."""
        return self.phase.reached(phase)

    def enter(self, phase: Phase, **changes: Any) -> None:
        """Go to `phase` with `changes`, in one atomic, durable save.

        Raises:
            IllegalTransitionError: `phase.TRANSITIONS` does not allow it (a bug; nothing saved).
            JournalWriteError: as `save`.
        """
        check_transition(self.phase, phase)
        self._save(phase=phase, **changes)

    def save(self, **changes: Any) -> None:
        """Apply `changes` (not the phase: `enter` changes it) and replace the file atomically
        and durably.

        Raises:
            JournalWriteError: the file could not be written (exit 3); it still holds the last
                state saved, and the message says what that means for ZooKeeper.
        """
        if "phase" in changes:
            raise IllegalTransitionError("the phase changes only through Journal.enter")
        self._save(**changes)

    def _save(self, **changes: Any) -> None:
        held, held_offset = self.phase, self.last_durable_offset
        for k, v in changes.items():
            setattr(self, k, v)
        doc = {"phase": self.phase.value, "cluster_id": self.cluster_id, "voters": self.voters,
               "leader_epoch": self.leader_epoch,
               "last_durable_offset": self.last_durable_offset, "claim": self.claim,
               "claims": self.claims, "fence": self.fence,
               "migration_zk_version": self.migration_zk_version, "facts": self.facts}
        try:
            if not self.directory.is_dir():
                self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            atomic_write(self.path, orjson.dumps(doc, option=orjson.OPT_INDENT_2), None)
        except OSError as exc:
            raise JournalWriteError(self._write_failed(exc, held, held_offset)) from exc

    def _write_failed(self, exc: OSError, held: Phase, held_offset: int) -> str:
        """The message of a failed save: the file, the errno, and what is safe now."""
        on_file = (f"the file still holds phase {held.value!r} (last durable offset {held_offset})"
                   if self.path.is_file() else "no journal was saved yet")
        head = (f"journal {self.path}: cannot write ({_os_error(exc)}); the run stopped here, "
                f"as a crash would, and {on_file}. ")
        if not self.phase.reached(Phase.FENCED):
            return head + ("ZooKeeper is untouched (not fenced: its own controller still "
                           "leads). Make the journal's filesystem writable (free space) and "
                           "re-run this same command: it resumes from the journal")
        return head + ("ZooKeeper IS fenced by this migration: no controller leads until the "
                       "run is finished. Make the journal's filesystem writable (free space) and "
                       "re-run this same command: it resumes from the journal and never fences "
                       "twice; or stop here with `zk2kraft rollback` (same --zookeeper, --voter "
                       "and --journal) to hand ZooKeeper back")


def _claims(doc: dict[str, Any]) -> list[str]:
    """`claims` of a journal document; one written before the list existed has only `claim`."""
    claims = doc.get("claims")
    if claims is None:
        return [doc["claim"]] if doc.get("claim") else []
    if not isinstance(claims, list) or not all(isinstance(c, str) for c in claims):
        raise ValueError("claims is not a list of strings")
    return list(claims)
