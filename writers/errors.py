"""Errors raised while encoding, writing and reading Kafka's metadata log.

    WriterError                   root
    ├── SchemaError               a record does not fit its schema (unknown type/version/field)
    ├── LogCorruptionError        damaged log/snapshot; names file, byte, offset (exit 2)
    ├── VoterStateError           a voter directory holds something else / is inconsistent (exit 1)
    │   ├── VoterFileFormatError  a voter's meta.properties / quorum-state is malformed (exit 2)
    │   └── QuorumLedElsewhereError  a real controller leads the quorum the stand-in wanted (exit 1)
    ├── VoterUnavailableError     voter dir unusable, or majority lost (exit 3)
    │   ├── VoterLockedError      a voter dir's `.lock` is held (Kafka, another run) (exit 3)
    │   └── BrokerLogDirUnavailableError  a broker log dir's meta.properties unreadable (exit 3)
    └── BrokerLogDirError         a broker log dir's meta.properties missing/malformed (exit 2)
"""

from __future__ import annotations

from pathlib import Path

__all__ = [
    "BrokerLogDirError",
    "BrokerLogDirUnavailableError",
    "LogCorruptionError",
    "QuorumLedElsewhereError",
    "SchemaError",
    "VoterFileFormatError",
    "VoterLockedError",
    "VoterStateError",
    "VoterUnavailableError",
    "WriterError",
]


class WriterError(Exception):
    """Root of every error raised by `writers`."""


class SchemaError(WriterError):
    """A record cannot be encoded or decoded with its schema (names type, version and field)."""


class LogCorruptionError(WriterError):
    """A batch or record in a log/snapshot file is invalid.

    Attributes:
        file: the file's path.
        position: byte position of the damaged batch in the file.
        offset: the log offset concerned, when known.
    """

    def __init__(self, file: str, position: int, offset: int | None, problem: str) -> None:
        where = f"{file} at byte {position}" + (f" (offset {offset})" if offset is not None else "")
        super().__init__(f"{where}: {problem}")
        self.file = file
        self.position = position
        self.offset = offset
        self.problem = problem


class VoterStateError(WriterError):
    """A voter directory already holds a different log or cluster; says what differs."""


class VoterFileFormatError(VoterStateError):
    """A voter's `meta.properties`, `quorum-state` or `partition.metadata` is not what Kafka
    writes there (bad input, like a damaged segment); names the file and the problem.

    A `VoterStateError` so callers that refuse a foreign directory refuse this one too.
    """


class QuorumLedElsewhereError(VoterStateError):
    """A voter answered the stand-in's Vote naming another leader: a real controller leads the
    quorum (it won an election, e.g. after the stand-in died), and the stand-in must not lead
    over a log that moved on without it.

    Attributes:
        voter_id: the voter that answered.
        leader_id: the leader it named.
        leader_epoch: that leader's epoch.
    """

    def __init__(self, message: str, *, voter_id: int, leader_id: int, leader_epoch: int) -> None:
        super().__init__(message)
        self.voter_id = voter_id
        self.leader_id = leader_id
        self.leader_epoch = leader_epoch


class VoterUnavailableError(WriterError):
    """A voter directory cannot be read or written, or fewer than a majority remain."""


class VoterLockedError(VoterUnavailableError):
    """A voter directory's `.lock` is held by another process (or run); names the holder.

    Attributes:
        directory: the voter directory.
        lock_file: its `.lock`.
        holder_pid: the holder's pid, when it could be found (F_GETLK or /proc/locks).
    """

    def __init__(self, message: str, *, directory: Path, lock_file: Path,
                 holder_pid: int | None) -> None:
        super().__init__(message)
        self.directory = directory
        self.lock_file = lock_file
        self.holder_pid = holder_pid


class BrokerLogDirError(WriterError):
    """A broker log dir (`prepare-broker`) has no usable `meta.properties`; names the file."""


class BrokerLogDirUnavailableError(VoterUnavailableError):
    """A broker log dir's `meta.properties` cannot be read or replaced (exit 3, like a voter
    directory: the disk or its permissions, not the data)."""
