"""A stopped ZooKeeper-mode broker's log directory, and the `directory.id` it gets before KRaft.

Why this exists (Kafka 3.9.1 and 4.1.1 source, confirmed by the offline rehearsal's logs): a
KRaft broker compares, for each of its replicas, the directory the metadata log names
(`PartitionRecord.directories`) with the `directory.id` of the log dir that holds it
(`ReplicaManager.maybeUpdateTopicAssignment`). When they differ it reports the real one to the
controller (`AssignReplicasToDirs`), stamped with the broker epoch of its *own metadata image*
(`AssignmentsManager`: `image.cluster().brokerEpoch(nodeId)`, -1 while the image has no
registration of it). On a migrated log, every replica differs: a ZooKeeper-mode log dir has no
`directory.id` (`KafkaServer` only adds one when migration is enabled, and Kafka generates a
random one at the first KRaft start), so nothing could name it. And the first image a broker
publishes is the log up to the high watermark it first saw, without its own registration (that
record is committed a moment later and only published once the first, long publication of
every replica is done). So the controller answers `STALE_BROKER_EPOCH` and both log it at ERROR
until the broker's image catches up.

The fix is to know the directory id before the first start: `zk2kraft prepare-broker` writes a
`directory.id` derived from the cluster id and broker id (`broker_directory_id`) into the
broker's first log dir, and `migrate --offline` names the same id in every `PartitionRecord`.
The broker then finds nothing to report. Kafka keeps an existing `directory.id`
(`MetaProperties` reads it from a version-0 file too; `KafkaServer` writes exactly that in
migration mode), and the broker registers it as its directory.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from writers.errors import BrokerLogDirError, BrokerLogDirUnavailableError
from writers.log.fsutil import Ownership, atomic_write
from writers.log.names import directory_id_for
from writers.log.reader import parse_properties
from writers.log.voter_lock import acquire_voter_lock

__all__ = ["BrokerLogDir", "broker_directory_id", "prepare_broker_log_dir", "read_broker_log_dir"]

_META = "meta.properties"


def broker_directory_id(cluster_id: str, broker_id: int) -> str:
    """The `directory.id` zk2kraft gives broker `broker_id`'s first log dir.

    Deterministic, so `prepare-broker` (on the broker host, reading the dir's own
    `meta.properties`) and `migrate --offline` (reading ZooKeeper's `/cluster/id`) agree without
    talking to each other; derived like the voters' ids, from another seed.
    """
    return directory_id_for(cluster_id, broker_id, label="broker directory.id")


@dataclass(frozen=True, slots=True)
class BrokerLogDir:
    """What a broker log dir's `meta.properties` says.

    Attributes:
        path: the log dir.
        broker_id: `broker.id` (version 0, ZooKeeper mode) or `node.id` (version 1).
        cluster_id: `cluster.id`.
        directory_id: `directory.id`, or None when the file has none (every ZooKeeper-mode
            broker that never ran with migration enabled).
        text: the file as it is (kept so an update changes one line only).
    """

    path: Path
    broker_id: int
    cluster_id: str
    directory_id: str | None
    text: str


def read_broker_log_dir(path: Path) -> BrokerLogDir:
    """Read a broker log dir's `meta.properties`.

    Raises:
        BrokerLogDirError: no such dir or file, or the file lacks broker.id/cluster.id (exit 2).
        BrokerLogDirUnavailableError: it cannot be read (exit 3).
    """
    meta = path / _META
    if not path.is_dir():
        raise BrokerLogDirError(f"{path}: not a directory")
    try:
        text = meta.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BrokerLogDirError(
            f"{meta}: missing (not a broker log dir, or the broker never started)") from None
    except UnicodeDecodeError:
        raise BrokerLogDirError(f"{meta}: not UTF-8 text") from None
    except OSError as exc:
        raise BrokerLogDirUnavailableError(f"{meta}: cannot read: {exc.strerror or exc}") from exc
    props = parse_properties(text)
    id_key = "node.id" if props.get("version", "0") == "1" else "broker.id"
    raw_id = props.get(id_key)
    cluster_id = props.get("cluster.id")
    if raw_id is None or not re.fullmatch(r"-?\d+", raw_id) or not cluster_id:
        raise BrokerLogDirError(f"{meta}: needs {id_key} and cluster.id (has "
                                f"{', '.join(sorted(props)) or 'nothing'})")
    return BrokerLogDir(path, int(raw_id), cluster_id, props.get("directory.id"), text)


def prepare_broker_log_dir(path: Path, *, first: bool, dry_run: bool) -> tuple[BrokerLogDir, str]:
    """Give a stopped broker's log dir the `directory.id` `migrate --offline` names.

    Only the broker's first log dir (`log.dirs`' first entry, `first=True`) gets the derived id:
    it is the one `migrate` names for every replica of the broker. The others are left alone
    (Kafka gives them a random id at start, and the replicas they hold are reported as before).

    Returns:
        (the dir as read, what was done: "set", "would set", "already set", "kept", "not first").
        "kept" means the dir already has a different `directory.id` (a broker that ran with
        migration enabled, or in KRaft mode): it is never changed, since a controller may know it.

    Raises:
        BrokerLogDirError: unreadable contents (exit 2).
        BrokerLogDirUnavailableError: the file cannot be read or replaced (exit 3).
        VoterLockedError: the dir's `.lock` is held: the broker is running (exit 3).
    """
    if not first:
        return read_broker_log_dir(path), "not first"
    read_broker_log_dir(path)  # a dir that is not a broker's gets no `.lock` either
    release = acquire_voter_lock(path)  # Kafka's own `.lock`: held while the broker runs
    try:
        return _prepare_first(path, dry_run=dry_run)
    finally:
        release()


def _prepare_first(path: Path, *, dry_run: bool) -> tuple[BrokerLogDir, str]:
    found = read_broker_log_dir(path)
    wanted = broker_directory_id(found.cluster_id, found.broker_id)
    if found.directory_id == wanted:
        return found, "already set"
    if found.directory_id is not None:
        return found, "kept"
    if dry_run:
        return found, "would set"
    text = found.text if found.text.endswith("\n") or not found.text else found.text + "\n"
    meta = path / _META
    try:
        mode = os.stat(meta).st_mode & 0o777  # Kafka writes it 0644: keep what it was
        atomic_write(meta, f"{text}directory.id={wanted}\n".encode(), Ownership.of_dir(path))
        os.chmod(meta, mode)
    except OSError as exc:
        raise BrokerLogDirUnavailableError(
            f"{path / _META}: cannot write: {exc.strerror or exc}") from exc
    return found, "set"
