"""The loader: record batches in, a committed image and its provenance out.

Kafka's `MetadataBatchLoader` owns what a delta must not know about: batches, offsets, epochs
and metadata transactions (KIP-868). Records between `BeginTransactionRecord` and
`EndTransactionRecord` become visible only at the end marker; an `AbortTransactionRecord`
discards them; a transaction still open when the log ends is reported (`LoadedLog.
open_transaction`) and its records are not in the image, exactly as a controller taking over
that log would see it before writing its own abort. Every replay failure names its offset.

Snapshots (`.checkpoint`) replace the image: their records are replayed on top of the current
image and `finish_snapshot()` deletes whatever they did not mention.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from os import PathLike
from typing import Protocol

from verify.delta import MetadataDelta
from verify.errors import ReplayError
from verify.image import MetadataImage
from writers import ControlRecord, MetadataRecord, RecordBatch
from zkreader import paused_gc

__all__ = [
    "LoadedLog",
    "LogEntryLike",
    "MetadataLoader",
    "OpenTransaction",
    "Provenance",
    "load_log",
    "load_records",
    "snapshot_id",
]

_CHECKPOINT = re.compile(r"(\d{20})-(\d{10})\.checkpoint$")


@dataclass(frozen=True, slots=True)
class Provenance:
    """Where an image comes from (Kafka's `MetadataProvenance`).

    Attributes:
        last_offset: offset of the last record loaded (-1: none).
        last_epoch: leader epoch of the batch holding it (-1: none).
        last_timestamp_ms: that batch's timestamp.
        batches: batches loaded (data and control).
        records: metadata records replayed (control records not counted).
    """

    last_offset: int = -1
    last_epoch: int = -1
    last_timestamp_ms: int = -1
    batches: int = 0
    records: int = 0


@dataclass(frozen=True, slots=True)
class OpenTransaction:
    """A metadata transaction begun but neither ended nor aborted when the log ended."""

    name: str | None
    begin_offset: int
    pending_records: int


@dataclass(frozen=True, slots=True)
class LoadedLog:
    """The result of loading a log: what a controller would serve, and how it got there.

    Attributes:
        image: the committed image (records of an open transaction excluded).
        provenance: last offset/epoch and counts.
        open_transaction: the transaction still open at the end, if any.
        aborted_transactions: how many transactions were aborted (their records discarded).
    """

    image: MetadataImage
    provenance: Provenance
    open_transaction: OpenTransaction | None = None
    aborted_transactions: int = 0


class MetadataLoader:
    """Feeds batches to deltas, tracking offsets, epochs and the open transaction.

    Args:
        base: the image to start from (`MetadataImage.EMPTY` for a whole log).
    """

    def __init__(self, base: MetadataImage | None = None) -> None:
        self._committed = base if base is not None else MetadataImage.EMPTY
        self._delta = MetadataDelta(self._committed)
        self._txn: OpenTransaction | None = None
        self._txn_records = 0
        self._aborted = 0
        self._last_offset = -1
        self._last_epoch = -1
        self._last_ts = -1
        self._batches = 0
        self._records = 0

    @property
    def last_offset(self) -> int:
        """Offset of the last record loaded (-1 before any)."""
        return self._last_offset

    def load_batch(self, batch: RecordBatch) -> None:
        """Replay one batch of the log.

        Raises:
            ReplayError: a record does not apply, the batch goes backwards, or a transaction
                marker is out of place; the message names the offset.
        """
        if batch.base_offset <= self._last_offset:
            raise ReplayError(
                f"batch at offset {batch.base_offset} does not follow offset {self._last_offset}",
                offset=batch.base_offset,
            )
        for index, record in enumerate(batch.records):
            if isinstance(record, ControlRecord):
                continue  # LEADER_CHANGE, snapshot markers: nothing for the image
            self._replay(record, batch.base_offset + index)
        self._advance(batch)

    def _replay(self, record: MetadataRecord, offset: int) -> None:
        kind = record.type
        if kind == "BEGIN_TRANSACTION_RECORD":
            if self._txn is not None:
                raise ReplayError(
                    f"transaction {self._txn.name!r} begun at offset {self._txn.begin_offset} "
                    "is still open", record_type=kind, offset=offset,
                )
            self._commit()
            name = record.data.get("name")
            self._txn = OpenTransaction(name if isinstance(name, str) else None, offset, 0)
            self._txn_records = 0
        elif kind == "END_TRANSACTION_RECORD":
            self._require_txn(kind, offset)
            self._commit()
            self._txn = None
        elif kind == "ABORT_TRANSACTION_RECORD":
            self._require_txn(kind, offset)
            self._delta = MetadataDelta(self._committed)
            self._txn = None
            self._aborted += 1
        else:
            try:
                self._delta.replay(record)
            except ReplayError as exc:
                raise exc.at(offset) from None
            self._txn_records += self._txn is not None
        self._records += 1

    def _require_txn(self, kind: str, offset: int) -> None:
        if self._txn is None:
            raise ReplayError("no transaction is open", record_type=kind, offset=offset)

    def _commit(self) -> None:
        if self._delta.records_replayed:
            self._committed = self._delta.apply()
            self._delta = MetadataDelta(self._committed)

    def _advance(self, batch: RecordBatch) -> None:
        if batch.records:
            self._last_offset = batch.last_offset
        self._last_epoch = batch.leader_epoch
        self._last_ts = batch.timestamp_ms
        self._batches += 1

    def load_snapshot(self, batches: Iterable[RecordBatch], *, end_offset: int,
                      epoch: int) -> None:
        """Replace the image by a snapshot's content (a `.checkpoint` file's batches).

        Args:
            batches: the snapshot's batches (offsets inside a snapshot start at 0).
            end_offset: the snapshot id's end offset (first log offset not in it).
            epoch: the snapshot id's epoch.

        Raises:
            ReplayError: a record does not apply (names the offset inside the snapshot), or a
                transaction is open in the log being loaded.
        """
        if self._txn is not None:
            raise ReplayError("a snapshot cannot be loaded inside an open transaction")
        self._commit()
        delta = MetadataDelta(self._committed)
        last_ts = -1
        for batch in batches:
            for index, record in enumerate(batch.records):
                if isinstance(record, ControlRecord):
                    continue
                try:
                    delta.replay(record)
                except ReplayError as exc:
                    raise exc.at(batch.base_offset + index) from None
                self._records += 1
            self._batches += 1
            last_ts = batch.timestamp_ms
        delta.finish_snapshot()
        self._committed = delta.apply()
        self._delta = MetadataDelta(self._committed)
        self._last_offset = end_offset - 1
        self._last_epoch = epoch
        self._last_ts = last_ts

    def finish(self) -> LoadedLog:
        """The committed image and provenance as of the last batch loaded."""
        if self._txn is None:
            self._commit()
        open_txn = None
        if self._txn is not None:
            open_txn = OpenTransaction(self._txn.name, self._txn.begin_offset, self._txn_records)
        return LoadedLog(
            self._committed,
            Provenance(self._last_offset, self._last_epoch, self._last_ts, self._batches,
                       self._records),
            open_txn,
            self._aborted,
        )


def snapshot_id(file: str) -> tuple[int, int] | None:
    """(end offset, epoch) of a `%020d-%010d.checkpoint` file name, None for other files."""
    m = _CHECKPOINT.search(file)
    return (int(m.group(1)), int(m.group(2))) if m else None


class LogEntryLike(Protocol):
    """What the log reader yields (`writers.LogEntry`): a batch and the file it came from."""

    @property
    def file(self) -> str | PathLike[str]: ...

    @property
    def batch(self) -> RecordBatch: ...


def load_log(entries: Iterable[LogEntryLike]) -> LoadedLog:
    """Load what a voter directory's reader yields (`LogSource.entries()`), in file order.

    A `.checkpoint` file's batches replace the image (the latest snapshot wins); log batches
    already covered by a loaded snapshot are skipped, as Kafka starts after its snapshot (a
    batch straddling the snapshot's end keeps only its newer records).

    Raises:
        ReplayError: a record does not apply; names the offset (and file for snapshots).
    """
    with paused_gc():
        return _load_log(entries)


def _load_log(entries: Iterable[LogEntryLike]) -> LoadedLog:
    loader = MetadataLoader()
    snap_file: str | None = None
    snap_batches: list[RecordBatch] = []
    covered = -1

    def flush() -> None:
        nonlocal snap_file, covered
        if snap_file is None:
            return
        sid = snapshot_id(snap_file)
        assert sid is not None
        try:
            loader.load_snapshot(snap_batches, end_offset=sid[0], epoch=sid[1])
        except ReplayError as exc:
            raise ReplayError(f"{snap_file}: {exc.problem}", record_type=exc.record_type,
                              offset=exc.offset) from None
        covered = sid[0] - 1
        snap_file = None
        snap_batches.clear()

    for entry in entries:
        file, batch = str(entry.file), entry.batch
        if snapshot_id(file) is not None:
            if file != snap_file:
                flush()
                snap_file = file
            snap_batches.append(batch)
            continue
        flush()
        if batch.last_offset <= covered:
            continue
        if batch.base_offset <= covered:
            skip = covered + 1 - batch.base_offset
            batch = RecordBatch(covered + 1, batch.leader_epoch, batch.timestamp_ms,
                                batch.records[skip:])
        loader.load_batch(batch)
    flush()
    return loader.finish()


def load_records(records: Iterable[MetadataRecord], *, base_offset: int = 0) -> LoadedLog:
    """Load records as if they were one batch at `base_offset` (tests, translator output).

    Raises:
        ReplayError: a record does not apply; names its offset.
    """
    batch = RecordBatch(base_offset, 0, 0, tuple(records))
    loader = MetadataLoader()
    with paused_gc():
        loader.load_batch(batch)
        return loader.finish()
