"""`zk2kraft inspect`: the redacted JSON form of each record, and the readable rich view.

Two outputs of the same decoded log (`writers.LogSource.entries()`):

* `inspect_json_lines` — one object per record, `{"offset","type","version","data"}`, where
  `type`/`version`/`data` are exactly what `kafka-dump-log --cluster-metadata-decoder` prints
  as `payload` (from the codec's `record_to_json`), so the two compare directly. Control records
  appear as such (`SNAPSHOT_HEADER`, `LEADER_CHANGE`, ...).
* `render_inspect` — a rich view: where the log came from (meta.properties, quorum-state), one
  row per batch (file, byte position, offsets, epoch, control or data, size), record-type counts,
  then the records.

Secrets are redacted before anything is printed (design I7), as Kafka's
`MetadataNodeRedactionCriteria` does, by the rule `plan`'s record samples use too
(`writers.redact_record_data`): SCRAM salts and keys, delegation-token details other than the
token id, and values of sensitive configs. `RedactionPolicy.DISABLED` (`--unredacted`) prints
records exactly as Kafka's dump tool would; it exists so the output can be compared byte for byte
with Kafka's, and it is never the default. Strings are rendered as literal text, never markup.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from verify._loader import OpenTransaction
from verify._report import RedactionPolicy
from writers import (
    RECORD_TYPES_WITH_SECRETS,
    LogEntry,
    LogSource,
    record_to_json,
    redact_record_data,
)

__all__ = [
    "InspectSummary",
    "TransactionTracker",
    "inspect_json_lines",
    "open_transaction_message",
    "redact_record_json",
    "render_inspect",
]



def redact_record_json(obj: dict[str, Any], policy: RedactionPolicy) -> dict[str, Any]:
    """Return a `record_to_json` object with its secret fields replaced (unless DISABLED).

    Args:
        obj: `{"type", "version", "data"}` as the codec produces it.
        policy: STRICT/NORMAL redact (there is no digest to abbreviate here); DISABLED keeps all.
    """
    if policy is RedactionPolicy.DISABLED:
        return obj
    kind = obj.get("type")
    data = obj.get("data")
    if kind not in RECORD_TYPES_WITH_SECRETS or not isinstance(data, dict):
        return obj
    return {**obj, "data": redact_record_data(kind, data)}


def _record_objects(entry: LogEntry, policy: RedactionPolicy) -> Iterator[dict[str, Any]]:
    for i, record in enumerate(entry.batch.records):
        obj = redact_record_json(record_to_json(record), policy)
        yield {"offset": entry.batch.base_offset + i, **obj}


class TransactionTracker:
    """Follows the log's metadata transaction (KIP-868) as records go by, as Kafka's loader does.

    A log that ends between a `BeginTransactionRecord` and its `End`/`AbortTransactionRecord`
    is readable, but a controller taking over would abort that transaction and drop every record
    in it, so `inspect` flags it (exit 1) instead of calling the log fine. Snapshot records do
    not count: a snapshot never holds an open transaction, and its offsets start at 0.
    """

    def __init__(self) -> None:
        self._begin: tuple[str | None, int] | None = None
        self._pending = 0

    def see(self, entry: LogEntry, obj: dict[str, Any]) -> None:
        """Account for one record (`obj` as `inspect_json_lines` yields it) of `entry`."""
        if entry.file.suffix == ".checkpoint":
            return
        kind = obj.get("type")
        if kind == "BEGIN_TRANSACTION_RECORD":
            data = obj.get("data")
            name = data.get("name") if isinstance(data, dict) else None
            self._begin = (name if isinstance(name, str) else None, int(obj["offset"]))
            self._pending = 0
        elif kind in ("END_TRANSACTION_RECORD", "ABORT_TRANSACTION_RECORD"):
            self._begin = None
        elif self._begin is not None and not entry.batch.is_control:
            self._pending += 1

    @property
    def open(self) -> OpenTransaction | None:
        """The transaction still open after the records seen so far, if any."""
        if self._begin is None:
            return None
        return OpenTransaction(self._begin[0], self._begin[1], self._pending)


def open_transaction_message(txn: OpenTransaction) -> str:
    """What `inspect` says about a log that ends inside an open transaction."""
    name = repr(txn.name) if txn.name is not None else "(unnamed)"
    return (f"the log ends inside an open metadata transaction: BeginTransactionRecord {name} "
            f"at offset {txn.begin_offset} has no EndTransactionRecord or "
            f"AbortTransactionRecord after it; a controller would abort it and drop its "
            f"{txn.pending_records} record(s)")


def inspect_json_lines(
    source: LogSource,
    policy: RedactionPolicy = RedactionPolicy.STRICT,
    transactions: TransactionTracker | None = None,
) -> Iterator[dict[str, Any]]:
    """Yield `{"offset","type","version","data"}` per record, snapshots first, then the log.

    Args:
        source: the log.
        policy: redaction policy.
        transactions: when given, sees every record (ask it `open` at the end).

    Raises:
        LogCorruptionError: at the first damaged batch (everything before it was yielded).
        VoterUnavailableError: a file cannot be read.
    """
    for entry in source.entries():
        for obj in _record_objects(entry, policy):
            if transactions is not None:
                transactions.see(entry, obj)
            yield obj


@dataclass
class InspectSummary:
    """What the rich view shows, gathered while decoding (also handy for tests)."""

    batches: list[LogEntry] = field(default_factory=list)
    type_counts: Counter[str] = field(default_factory=Counter)
    records: list[dict[str, Any]] = field(default_factory=list)
    total_records: int = 0
    open_transaction: OpenTransaction | None = None


def _header(console: Console, source: LogSource) -> None:
    t = Table.grid(padding=(0, 2))
    t.add_column(style="bold")
    t.add_column()
    t.add_row("path", Text(str(source.path)))
    t.add_row("kind", Text(source.kind))
    if source.meta is not None:
        m = source.meta
        t.add_row("cluster.id", Text(m.cluster_id))
        t.add_row("node.id", Text(str(m.node_id)))
        t.add_row("directory.id", Text(m.directory_id or "(none)"))
    if source.quorum_state is not None:
        q = source.quorum_state
        voters = q.get("currentVoters")
        ids = [v.get("voterId") for v in voters if isinstance(v, dict)] if isinstance(
            voters, list) else []
        t.add_row("quorum-state", Text(
            f"leaderId {q.get('leaderId')}, leaderEpoch {q.get('leaderEpoch')}, "
            f"votedId {q.get('votedId')}, voters {ids}, data_version {q.get('data_version')}"
        ))
    t.add_row("snapshots", Text(", ".join(p.name for p in source.snapshots) or "(none)"))
    t.add_row("segments", Text(", ".join(p.name for p in source.segments) or "(none)"))
    console.print(t)


def _batches_tables(summary: InspectSummary) -> list[Table]:
    """One table per file (so the 24-character file names do not crowd the columns)."""
    tables: list[Table] = []
    current: Path | None = None
    table = Table()
    for e in summary.batches:
        if e.file != current:
            current = e.file
            table = Table(title=Text(f"batches in {e.file.name}"), title_justify="left")
            for name in ("position", "offsets", "epoch", "kind", "records", "bytes",
                         "CreateTime"):
                table.add_column(name, justify="left" if name == "kind" else "right",
                                 no_wrap=True)
            tables.append(table)
        b = e.batch
        table.add_row(str(e.position), f"{b.base_offset}..{b.last_offset}",
                      str(b.leader_epoch), "control" if b.is_control else "data",
                      str(len(b.records)), str(e.size), str(b.timestamp_ms))
    return tables


def _counts_table(summary: InspectSummary) -> Table:
    table = Table(title="record types", title_justify="left")
    table.add_column("type")
    table.add_column("records", justify="right")
    for kind, n in sorted(summary.type_counts.items()):
        table.add_row(Text(kind), str(n))
    return table


def _records_table(summary: InspectSummary, max_records: int) -> Table:
    shown = len(summary.records)
    title = f"records ({shown} of {summary.total_records})" if shown < summary.total_records \
        else "records"
    table = Table(title=title, title_justify="left")
    table.add_column("offset", justify="right", no_wrap=True)
    table.add_column("type", no_wrap=True)
    table.add_column("v", justify="right")
    table.add_column("data", overflow="fold")
    for r in summary.records:
        data = json.dumps(r["data"], separators=(",", ":"), ensure_ascii=False)
        table.add_row(str(r["offset"]), Text(r["type"]), str(r["version"]), Text(data))
    return table


def render_inspect(
    console: Console,
    source: LogSource,
    *,
    policy: RedactionPolicy = RedactionPolicy.STRICT,
    max_records: int = 200,
) -> InspectSummary:
    """Decode `source` and print the readable view: header, batches, type counts, records.

    If the log is damaged, everything decoded before the damage is printed first, then the
    `LogCorruptionError` propagates (the CLI turns it into exit 2 with its message).

    Args:
        console: where to print (tests pass a fixed-width, colourless console).
        source: what `writers.open_log_source` resolved the path to.
        policy: redaction policy for record data (strict by default).
        max_records: records listed in full (type counts always cover every record).
    """
    _header(console, source)
    summary = InspectSummary()
    transactions = TransactionTracker()
    try:
        for entry in source.entries():
            summary.batches.append(entry)
            for obj in _record_objects(entry, policy):
                transactions.see(entry, obj)
                summary.type_counts[obj["type"]] += 1
                summary.total_records += 1
                if len(summary.records) < max_records:
                    summary.records.append(obj)
    finally:
        for table in _batches_tables(summary):
            console.print(table)
        console.print(_counts_table(summary))
        if max_records > 0:
            console.print(_records_table(summary, max_records))
        console.print(Text(f"{len(summary.batches)} batches, {summary.total_records} records"))
    summary.open_transaction = transactions.open
    if summary.open_transaction is not None:
        console.print(Text("WARNING: " + open_transaction_message(summary.open_transaction)))
    return summary
