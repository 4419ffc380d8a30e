"""Read a KRaft metadata log back: a voter dir, a `__cluster_metadata-0` dir, a `.log` or a
`.checkpoint`, validating everything and never skipping past damage.

Two layers:
* `scan_frames` walks batch *frames* only (the codec's `read_batch_header`: length, magic,
  CRC-32C over attributes..end) and checks offset continuity. It decodes no records, so
  `VoterDir` uses it to find where an existing log ends before appending.
* `LogSource.entries()` then decodes each batch with the codec (`writers.codec.batch.decode_batch`)
  and yields `(file, position, RecordBatch)`.

Why so strict: Kafka's own recovery truncates a segment at the first bad batch with only a WARN
(`LogSegment.recover`); a tool that is meant to prove a log correct must instead stop and say where.
Every problem is a `LogCorruptionError` naming the file, the byte position and the offset.

Also here: `meta.properties`, `quorum-state` and `partition.metadata` parsing, used by `VoterDir`
(to refuse a foreign directory), by `inspect` (the header of its view) and by verify (what a
controller would refuse at start).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from writers.codec.batch import BatchHeader
from writers.codec.batch_decode import decode_batch, read_batch_header
from writers.codec.records import ControlRecord, RecordBatch
from writers.errors import (
    LogCorruptionError,
    VoterFileFormatError,
    VoterStateError,
    VoterUnavailableError,
)

__all__ = [
    "LogEntry",
    "check_partition_dir",
    "LogSource",
    "METADATA_PARTITION_DIR",
    "METADATA_TOPIC_ID",
    "MetaProperties",
    "open_log_source",
    "parse_properties",
    "read_meta_properties",
    "LEADER_EPOCH_CHECKPOINT",
    "read_leader_epoch_checkpoint",
    "read_partition_metadata",
    "read_quorum_state",
    "scan_frames",
]

METADATA_PARTITION_DIR = "__cluster_metadata-0"
METADATA_TOPIC_ID = "AAAAAAAAAAAAAAAAAAAAAQ"  # Uuid(0, 1) = Uuid.METADATA_TOPIC_ID

SEGMENT_RE = re.compile(r"^(\d{20})\.log$")
SNAPSHOT_RE = re.compile(r"^(\d{20})-(\d{10})\.checkpoint$")

def scan_frames(
    buf: bytes, *, file: str, expected_offset: int | None = None, start: int = 0
) -> Iterator[BatchHeader]:
    """Walk the batch frames of one file's bytes, validating each header before yielding it.

    Headers are read by the codec's `read_batch_header` (length, magic, CRC-32C, KRaft's fixed
    fields); records are not decoded. This adds offset continuity across batches.

    Args:
        buf: the whole file content.
        file: its path, for error messages.
        expected_offset: when given, the first batch must start here and every next batch
            right after the previous one (no gap, no overlap).
        start: byte position to start at.

    Raises:
        LogCorruptionError: truncated header or batch, bad length, wrong magic, CRC mismatch,
            a header KRaft would not write, or an offset gap/overlap.
    """
    pos = start
    expected = expected_offset
    while pos < len(buf):
        header = read_batch_header(buf, pos, file=file)
        if expected is not None and header.base_offset != expected:
            kind = "gap" if header.base_offset > expected else "overlap"
            raise LogCorruptionError(
                file, pos, header.base_offset,
                f"offset {kind}: batch starts at {header.base_offset}, expected {expected}",
            )
        yield header
        expected = header.last_offset + 1
        pos = header.next_position


@dataclass(frozen=True, slots=True)
class MetaProperties:
    """The KRaft (version 1) `meta.properties` of a metadata directory."""

    cluster_id: str
    node_id: int
    directory_id: str | None
    version: int = 1

    def render(self) -> str:
        """The file's text: no timestamp comment, so a re-run writes identical bytes."""
        lines = ["#", "#Written by zk2kraft", f"node.id={self.node_id}"]
        if self.directory_id is not None:
            lines.append(f"directory.id={self.directory_id}")
        lines += [f"version={self.version}", f"cluster.id={self.cluster_id}"]
        return "\n".join(lines) + "\n"


def parse_properties(text: str) -> dict[str, str]:
    """Java `.properties` text, as Kafka reads it for meta.properties and for client and
    controller configs: `#`/`!` comments, `key=value`, `key: value` or `key value`, a `\\`
    line continuation, and a bare `key` meaning an empty value. Escapes (`\\:`, `\\uXXXX`) are
    not decoded: none of the keys or values the tool reads use them.
    """
    props: dict[str, str] = {}
    pending = ""
    for raw in text.splitlines():
        line = pending + raw.strip() if pending else raw.strip()
        if line.endswith("\\") and not line.endswith("\\\\"):
            pending = line[:-1]
            continue
        pending = ""
        if not line or line[0] in "#!":
            continue
        m = re.match(r"([^=:\s]+)\s*[=:\s]\s*(.*)$", line)
        if m is None:
            props[line] = ""
            continue
        props[m.group(1)] = m.group(2).strip()
    return props


_INT32_MAX = 2**31 - 1  # Kafka's node ids are int32


def _read_voter_file(path: Path) -> str | None:
    """The text of one of a voter's small files, None when it does not exist.

    Raises:
        VoterUnavailableError: it exists but cannot be read (exit 3).
        VoterFileFormatError: it is not UTF-8 text (exit 2).
    """
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except UnicodeDecodeError:
        raise VoterFileFormatError(f"{path}: not UTF-8 text") from None
    except OSError as exc:
        raise VoterUnavailableError(f"{path}: cannot read: {exc.strerror or exc}") from exc


def read_meta_properties(directory: Path) -> MetaProperties | None:
    """Read `DIR/meta.properties`, or None when there is none.

    Raises:
        VoterUnavailableError: the file exists but cannot be read.
        VoterFileFormatError: it is not a KRaft (version 1) file with cluster.id and node.id
            (e.g. a ZooKeeper-mode broker's version 0 file).
    """
    path = Path(directory) / "meta.properties"
    text = _read_voter_file(path)
    if text is None:
        return None
    props = parse_properties(text)
    version = props.get("version")
    if version != "1":
        raise VoterFileFormatError(
            f"{path}: version={version} is not a KRaft meta.properties (version=1 expected; "
            "version 0 belongs to a ZooKeeper-mode broker's log dir)"
        )
    if not props.get("cluster.id") or "node.id" not in props:
        raise VoterFileFormatError(f"{path}: cluster.id and node.id are required")
    try:
        node_id = int(props["node.id"])
    except ValueError:
        raise VoterFileFormatError(
            f"{path}: node.id={props['node.id']!r} is not an integer") from None
    if not 0 <= node_id <= _INT32_MAX:
        raise VoterFileFormatError(f"{path}: node.id={node_id} is outside 0..{_INT32_MAX}")
    return MetaProperties(props["cluster.id"], node_id, props.get("directory.id"))


# Kafka 3.9's `QuorumStateData` (raft's generated JSON converter, in kafka-raft-3.9.1.jar):
# every field of the file's data_version is mandatory ("unable to locate field 'x', which is
# mandatory in version N") and typed. Field -> the JSON types the converter takes.
_QUORUM_STATE_FIELDS: dict[int, dict[str, tuple[type, ...]]] = {
    0: {"clusterId": (str,), "leaderId": (int,), "leaderEpoch": (int,), "votedId": (int,),
        "appliedOffset": (int,), "currentVoters": (list, type(None))},
    1: {"leaderId": (int,), "leaderEpoch": (int,), "votedId": (int,),
        "votedDirectoryId": (str,)},
}


_JSON_TYPE_NAMES: dict[type, str] = {str: "string", int: "integer", list: "list",
                                     type(None): "null"}


def read_quorum_state(partition_dir: Path) -> dict[str, object] | None:
    """The parsed `quorum-state` JSON of a `__cluster_metadata-0` dir, or None if absent.

    Checked against Kafka's `QuorumStateData`: `data_version` 0 or 1, and every field of that
    version present with its JSON type (`currentVoters` a list of `{"voterId": int}` or null).
    A file failing this stops a Kafka controller at start; the values' meaning (a voter set,
    a vote) is judged by `verify.quorum_state_facts`.

    Raises:
        VoterUnavailableError: unreadable.
        VoterFileFormatError: not Kafka's quorum-state (names the file and the field).
    """
    path = Path(partition_dir) / "quorum-state"
    text = _read_voter_file(path)
    if text is None:
        return None
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise VoterFileFormatError(f"{path}: not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise VoterFileFormatError(f"{path}: not a JSON object")
    version = data.get("data_version")
    if type(version) is not int or version not in _QUORUM_STATE_FIELDS:
        raise VoterFileFormatError(f"{path}: data_version {version!r} (Kafka writes 0 or 1)")
    for name, types in _QUORUM_STATE_FIELDS[version].items():
        if name not in data:
            raise VoterFileFormatError(
                f"{path}: no {name!r}, which Kafka requires in data_version {version}")
        value = data[name]
        if type(value) not in types:
            wanted = " or ".join(_JSON_TYPE_NAMES[t] for t in types)
            raise VoterFileFormatError(f"{path}: {name!r} is {value!r}, not a JSON {wanted}")
    voters = data.get("currentVoters")
    if isinstance(voters, list) and not all(
            isinstance(v, dict) and type(v.get("voterId")) is int for v in voters):
        raise VoterFileFormatError(f"{path}: 'currentVoters' is not a list of {{\"voterId\": id}}")
    return data


LEADER_EPOCH_CHECKPOINT = "leader-epoch-checkpoint"
_CHECKPOINT_INT = re.compile(r"[+-]?[0-9]+")  # what Java's parseInt/parseLong take (ASCII)
_INT64_MAX = (1 << 63) - 1


def read_leader_epoch_checkpoint(partition_dir: Path) -> tuple[tuple[int, int], ...] | None:
    """The (epoch, start offset) entries of a partition dir's `leader-epoch-checkpoint`, None
    when there is none.

    Kafka 3.9's `CheckpointFile` reads it at start-up: a version line (0), a count line, then
    exactly that many `epoch offset` lines (split on whitespace: two fields, an int32 and an
    int64). An empty file, or one that ends after the version or count line, reads as no
    entries. Anything else stops the controller ("Malformed line in checkpoint file", a
    KafkaStorageException: a fatal fault, exit 1; seen with Kafka 3.9.1,
    docs/design/log-format.md). A missing file is fine: Kafka rebuilds it from the log's batches.

    Raises:
        VoterUnavailableError: unreadable.
        VoterFileFormatError: not in that format (names the file, the line and why).
    """
    path = Path(partition_dir) / LEADER_EPOCH_CHECKPOINT
    text = _read_voter_file(path)
    if text is None:
        return None
    lines = re.split(r"\r\n|\r|\n", text)
    if lines[-1] == "":  # a final line break ends the last line; it starts no new one
        lines.pop()

    def number(line_no: int, word: str, what: str, largest: int) -> int:
        if not _CHECKPOINT_INT.fullmatch(word) or not -largest - 1 <= int(word) <= largest:
            raise VoterFileFormatError(
                f"{path}: line {line_no} {lines[line_no - 1]!r}: {what} is not an integer "
                "Kafka reads (a malformed checkpoint stops the controller at start-up)")
        return int(word)

    if not lines:
        return ()
    version = number(1, lines[0], "the version", _INT32_MAX)
    if version != 0:
        raise VoterFileFormatError(f"{path}: version {version} (Kafka reads version 0)")
    if len(lines) == 1:
        return ()
    count = number(2, lines[1], "the entry count", _INT32_MAX)
    entries = []
    for line_no, line in enumerate(lines[2:], start=3):
        fields = re.split(r"\s+", line)
        while fields and fields[-1] == "":  # Java's split drops trailing empty strings
            fields.pop()
        if len(fields) != 2:
            raise VoterFileFormatError(
                f"{path}: line {line_no} {line!r} is not 'epoch offset' (a malformed "
                "checkpoint stops the controller at start-up)")
        entries.append((number(line_no, fields[0], "the epoch", _INT32_MAX),
                        number(line_no, fields[1], "the offset", _INT64_MAX)))
    if len(entries) != count:
        raise VoterFileFormatError(
            f"{path}: the count line says {count} entries but {len(entries)} follow (Kafka "
            "refuses such a checkpoint at start-up)")
    return tuple(entries)


_PARTITION_METADATA = re.compile(r"^version: *(\d+)\s*\ntopic_id: *(\S+)\s*$")


def read_partition_metadata(partition_dir: Path) -> str | None:
    """The topic id in a partition dir's `partition.metadata`, None if absent.

    The file is Kafka's `PartitionMetadataFile` (`version: 0` then `topic_id: <id>`), as
    `VoterDir` writes it for `__cluster_metadata-0` and a broker for each of its partitions.

    Raises:
        VoterUnavailableError: unreadable.
        VoterFileFormatError: not Kafka's partition.metadata (version 0).
    """
    path = Path(partition_dir) / "partition.metadata"
    text = _read_voter_file(path)
    if text is None:
        return None
    m = _PARTITION_METADATA.match(text)
    if m is None or m.group(1) != "0":
        raise VoterFileFormatError(
            f"{path}: not Kafka's partition.metadata ('version: 0' then 'topic_id: <id>')")
    return m.group(2)


@dataclass(frozen=True, slots=True)
class LogEntry:
    """One decoded, validated batch and where it came from."""

    file: Path
    position: int
    size: int
    batch: RecordBatch


def _read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise VoterUnavailableError(f"{path}: cannot read: {exc.strerror or exc}") from exc


def _list_dir(path: Path) -> list[str]:
    try:
        return sorted(p.name for p in path.iterdir())
    except OSError as exc:
        raise VoterUnavailableError(f"{path}: cannot list: {exc.strerror or exc}") from exc


def decode_file(path: Path, *, expected_offset: int | None) -> Iterator[LogEntry]:
    """Validate and decode every batch of one `.log` / `.checkpoint` file.

    Raises:
        LogCorruptionError: see `scan_frames`; also any record that does not decode.
        VoterUnavailableError: the file cannot be read.
    """
    buf = _read_bytes(path)
    name = str(path)
    for frame in scan_frames(buf, file=name, expected_offset=expected_offset):
        batch, nxt = decode_batch(buf, frame.position, file=name)
        if nxt != frame.next_position:  # pragma: no cover - codec/frame disagreement
            raise LogCorruptionError(name, frame.position, frame.base_offset,
                                     f"batch decodes to {nxt - frame.position} bytes, "
                                     f"header says {frame.size}")
        yield LogEntry(path, frame.position, frame.size, batch)


def _check_snapshot(entries: list[LogEntry], path: Path) -> None:
    if not entries:
        return
    first = entries[0].batch.records[0] if entries[0].batch.records else None
    if not (isinstance(first, ControlRecord) and first.type == "SNAPSHOT_HEADER"):
        raise LogCorruptionError(str(path), 0, 0,
                                 "a snapshot must start with a SNAPSHOT_HEADER control record")


@dataclass
class LogSource:
    """What `inspect PATH` resolved PATH to, and the files it reads, in order.

    Attributes:
        path: what was given.
        kind: "voter-dir", "log-dir", "segment" or "snapshot".
        meta: the voter dir's meta.properties, when there is one.
        quorum_state: the log dir's quorum-state JSON, when there is one.
        snapshots: `.checkpoint` files (each its own offset space, starting at 0).
        segments: `.log` segments in base-offset order (one offset space).
    """

    path: Path
    kind: str
    meta: MetaProperties | None = None
    quorum_state: dict[str, object] | None = None
    snapshots: list[Path] = field(default_factory=list)
    segments: list[Path] = field(default_factory=list)

    def entries(self) -> Iterator[LogEntry]:
        """Every batch of every file: snapshots first, then the log segments.

        Raises:
            LogCorruptionError: damage, a missing segment or an offset gap, named precisely.
            VoterUnavailableError: a file cannot be read.
        """
        covered = 0
        for snap in self.snapshots:
            got = list(decode_file(snap, expected_offset=0))
            _check_snapshot(got, snap)
            yield from got
            m = SNAPSHOT_RE.match(snap.name)
            if m:
                covered = max(covered, int(m.group(1)))
        expected: int | None = None
        for seg in self.segments:
            m = SEGMENT_RE.match(seg.name)
            base = int(m.group(1)) if m else None
            if self.kind == "segment":
                expected = None  # a lone segment: continuity within the file only
                first = True
                for entry in decode_file(seg, expected_offset=None):
                    if first and base is not None and entry.batch.base_offset < base:
                        raise LogCorruptionError(
                            str(seg), 0, entry.batch.base_offset,
                            f"first batch offset is below the segment's base offset {base}")
                    first = False
                    yield entry
                continue
            if expected is None:
                if base is not None and base > covered:
                    raise LogCorruptionError(
                        str(seg), 0, base,
                        f"log starts at offset {base} but no segment or snapshot holds the "
                        f"offsets before it (missing segment?)")
                expected = base
            elif base is not None and base != expected:
                kind = "gap" if base > expected else "overlap"
                raise LogCorruptionError(
                    str(seg), 0, base,
                    f"offset {kind} between segments: segment starts at {base}, "
                    f"previous segment ends before {expected} (missing segment?)")
            for entry in decode_file(seg, expected_offset=expected):
                expected = entry.batch.last_offset + 1
                yield entry


def check_partition_dir(partition: Path) -> None:
    """Refuse a `__cluster_metadata-0` that exists but is no directory, as damaged voter data.

    One meaning everywhere (issue 31): `migrate` read it as an unknown file (1), `verify` and
    `inspect` as an unlistable directory (3). It is neither a foreign log nor unreachable: the
    voter's layout is not Kafka's (a controller fails on it at start-up), so it is exit 2, like
    a damaged `meta.properties`, and nothing but removing it helps.

    Raises:
        VoterFileFormatError: `partition` is a file (or another non-directory).
    """
    if partition.exists() and not partition.is_dir():
        raise VoterFileFormatError(
            f"{partition}: is a file, where Kafka keeps the metadata log's directory (a "
            "controller cannot start on it); remove it")


def open_log_source(path: Path) -> LogSource:
    """Classify PATH (voter dir, `__cluster_metadata-0` dir, `.log`, `.checkpoint`).

    Raises:
        FileNotFoundError: PATH does not exist.
        VoterUnavailableError: PATH (or a file in it) cannot be read.
        VoterStateError: a directory that holds no metadata log, or an unknown file type.
        VoterFileFormatError: a `__cluster_metadata-0` that is not a directory (exit 2).
    """
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(str(p))
    if p.name == METADATA_PARTITION_DIR:
        check_partition_dir(p)
    if p.is_file():
        if p.name.endswith(".checkpoint"):
            return LogSource(p, "snapshot", snapshots=[p])
        if p.name.endswith(".log"):
            return LogSource(p, "segment", segments=[p])
        raise VoterStateError(f"{p}: not a .log segment or .checkpoint snapshot")
    names = _list_dir(p)
    if METADATA_PARTITION_DIR in names:
        check_partition_dir(p / METADATA_PARTITION_DIR)
        src = _log_dir_source(p / METADATA_PARTITION_DIR, "voter-dir", p)
        src.meta = read_meta_properties(p)
        return src
    if any(SEGMENT_RE.match(n) or SNAPSHOT_RE.match(n) for n in names) or p.name.startswith(
        "__cluster_metadata"
    ):
        return _log_dir_source(p, "log-dir", p)
    raise VoterStateError(
        f"{p}: holds no {METADATA_PARTITION_DIR}/ and no .log or .checkpoint files"
    )


def _log_dir_source(log_dir: Path, kind: str, given: Path) -> LogSource:
    names = _list_dir(log_dir)
    segs = sorted((log_dir / n for n in names if SEGMENT_RE.match(n)), key=lambda q: q.name)
    snaps = sorted((log_dir / n for n in names if SNAPSHOT_RE.match(n)), key=lambda q: q.name)
    read_leader_epoch_checkpoint(log_dir)  # a controller refuses a malformed one at start
    read_partition_metadata(log_dir)
    return LogSource(given, kind, quorum_state=read_quorum_state(log_dir),
                     snapshots=snaps, segments=segs)
