"""`zk2kraft prepare-broker --log-dirs DIR[,DIR...] (--zookeeper CONNECT | --metadata-log DIR)
[--dry-run]`: run on each stopped broker host before its first start in KRaft mode after
`migrate --offline`.

It carries the migration's proof onto the broker's disks (issue 29: Kafka 4.4 renamed away 44
partition directories a 2.8 broker had left without `partition.metadata`, and a single-replica
partition lost every record while every command exited 0). Every partition directory in the
log dirs is judged as the broker's first KRaft start will judge it
(`writers.log.broker_dirs.check_replica_dirs`) against the migrated metadata, read from
ZooKeeper (`--zookeeper`: its topic ids and assignments are the log's, `verify` proves that) or
from a copy of a voter's metadata log (`--metadata-log`):
* the topic id in `partition.metadata` equals the migrated topic's: ok;
* no `partition.metadata`: it is written from the migrated topic id;
* another topic id, a partition not assigned to this broker, a topic or partition the migrated
  metadata lacks, a damaged `partition.metadata`, the same partition in two log dirs, or a
  directory that is not `<topic>-<partition>`: refused, each named. Kafka would rename such a
  directory away as stray (or refuse the log dir), so nothing at all is written (exit 1) until
  the operator has moved it out of the log dirs or fixed it.
The broker's first log dir also gets the `directory.id` that the migrated log names for its
replicas (derived from the dir's own `cluster.id` and `broker.id`), so the broker has nothing
to report at start (writers/log/broker_dirs.py has the Kafka facts).

`--dry-run` lists every directory and what would happen to it, writes nothing and takes no
lock (it works on a read-only mount; a running broker is still refused). Every run ends with
a summary: how many replica directories each outcome covers.

Idempotent: a second run finds everything ok. Exit codes: 0 done (or nothing to do); 1 refused
directories (nothing written); 2 bad flags or input (log dirs of different brokers or another
cluster, the same dir twice, a dir that is not a broker log dir); 3 ZooKeeper or a log dir
unreachable, unwritable or locked (the broker runs).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from migrate.cli.args import SUB_EPILOG, Subparsers, add_zookeeper
from migrate.cli.exit_codes import EXIT_FINDINGS
from migrate.errors import BadFlagError
from migrate.flags.zookeeper import connect_options
from writers import (
    BROKER_LOG_DIR,
    BrokerLogDir,
    BrokerLogDirError,
    MigratedTopic,
    ReplicaCheck,
    ReplicaOutcome,
    acquire_voter_lock,
    broker_directory_id,
    check_replica_dirs,
    directory_id_action,
    missing_replicas,
    read_broker_log_dir,
    voter_lock_holder,
    write_directory_id,
    write_partition_metadata,
)
from zkreader import ConnectOptions

__all__ = ["add_parser", "run"]

_SAID = {
    "set": "directory.id set to {id}",
    "would set": "would set directory.id to {id} (--dry-run: nothing written)",
    "not set": "directory.id {id} not set: refused directories below",
    "already set": "directory.id is already {id}: nothing to do",
    "kept": "has directory.id {have}, not {id}: kept (Kafka may know it); this broker's "
            "replicas will be re-reported at its first start",
    "not first": "not the first log dir: left alone (Kafka gives it an id at start)",
}


def add_parser(sub: Subparsers) -> None:
    """Register `zk2kraft prepare-broker` and its flags (`cli.build_parser` calls it)."""
    p = sub.add_parser(
        "prepare-broker",
        help="on each stopped broker host, after migrate --offline: check every partition "
        "directory against the migrated metadata, write missing partition.metadata and the "
        "directory.id the log names",
        description="Run on each stopped broker host before its first start in KRaft mode "
        "after `migrate --offline`. Judges every partition directory in --log-dirs as Kafka's "
        "first KRaft start will, against the migrated metadata (--zookeeper, or a copy of a "
        "voter's log with --metadata-log): writes a missing partition.metadata from the "
        "migrated topic id; refuses (exit 1, each directory named, nothing written) a "
        "directory whose topic id differs, whose partition is not assigned to this broker or "
        "that the migrated metadata lacks, since Kafka would rename it away as stray. Gives "
        "the first log dir the directory.id the log names for the broker's replicas. "
        "Idempotent; refuses while the broker runs (its .lock is held: exit 3).\n\n"
        "prepare-broker's exit codes: 0 done; 1 refused directories (nothing written); 2 bad "
        "flags or input; 3 ZooKeeper or a log dir unreachable, unwritable or locked.",
        epilog=SUB_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--log-dirs", required=True, metavar="DIR[,DIR...]",
                   help="the broker's log.dirs, in the same order (the first one gets the id)")
    p.add_argument("--metadata-log", metavar="DIR",
                   help="the migrated metadata from a copy of a voter directory (or its "
                   "__cluster_metadata-0) instead of --zookeeper")
    p.add_argument("--dry-run", action="store_true",
                   help="list every directory and what would change; write nothing, take no lock")
    add_zookeeper(p, required=False)


@dataclass(frozen=True, slots=True)
class _Migrated:
    """The migrated metadata, as far as a broker's disks need it.

    Attributes:
        source: what it was read from, for messages.
        cluster_id: the migrated cluster's id (None when the source does not say).
        topics: name -> topic id and assignment.
        left_out: name -> why the migration left that topic out.
    """

    source: str
    cluster_id: str | None
    topics: Mapping[str, MigratedTopic]
    left_out: Mapping[str, str]


def _log_dirs(value: str) -> list[Path]:
    """`--log-dirs`, each dir once (Kafka refuses duplicates too: `LogManager`)."""
    dirs = [Path(d.strip()) for d in value.split(",") if d.strip()]
    if not dirs:
        raise BadFlagError("--log-dirs: give the broker's log.dirs, comma-separated")
    seen: dict[str, Path] = {}
    for d in dirs:
        real = os.path.realpath(d)
        if real in seen:
            same = "" if str(seen[real]) == str(d) else f" (the same directory as {seen[real]})"
            raise BadFlagError(f"--log-dirs: {d} is given twice{same}")
        seen[real] = d
    return dirs


def _check_source_flags(args: argparse.Namespace) -> Callable[[], _Migrated]:
    """The reader of the migrated metadata the flags name, checked before anything is read."""
    if args.zookeeper is None and args.metadata_log is None:
        raise BadFlagError("prepare-broker needs the migrated metadata to check the log dirs "
                           "against: --zookeeper CONNECT (the cluster's ZooKeeper) or "
                           "--metadata-log DIR (a copy of a voter directory)")
    if args.zookeeper is not None and args.metadata_log is not None:
        raise BadFlagError("--zookeeper and --metadata-log: give one source of the migrated "
                           "metadata, not both")
    if args.metadata_log is not None:
        path = Path(args.metadata_log)
        return lambda: _from_metadata_log(path)
    options = connect_options(args)
    return lambda: _from_zookeeper(options)


def _from_zookeeper(options: ConnectOptions) -> _Migrated:
    from migrate._progress import ProgressBars, progress_wanted
    from migrate.flags.zookeeper import read_snapshot
    from zkreader import migrating_topic

    with ProgressBars(enabled=progress_wanted(quiet=False, stdout_is_document=False)) as bars:
        snapshot = read_snapshot(options, bars)
    topics: dict[str, MigratedTopic] = {}
    left_out: dict[str, str] = {}
    for name, topic in snapshot.topics.items():
        if migrating_topic(snapshot, name) and topic.topic_id is not None:
            topics[name] = MigratedTopic(topic.topic_id, topic.assignment)
        elif name in snapshot.pending_deletions:
            left_out[name] = "queued for deletion in ZooKeeper: not migrated"
        else:
            left_out[name] = "has no topic id in ZooKeeper: not migrated (plan's TOPIC_WITHOUT_ID)"
    cluster_id = snapshot.cluster_id.cluster_id if snapshot.cluster_id is not None else None
    return _Migrated(f"ZooKeeper {options.connect}", cluster_id, topics, left_out)


def _from_metadata_log(path: Path) -> _Migrated:
    from verify import load_log
    from writers import VoterStateError, open_log_source

    try:
        source = open_log_source(path)
    except FileNotFoundError:
        raise BadFlagError(f"--metadata-log {path}: no such file or directory") from None
    except VoterStateError as exc:
        raise BadFlagError(f"--metadata-log: {exc}") from None
    if source.kind not in ("voter-dir", "log-dir"):
        raise BadFlagError(f"--metadata-log {path}: give a voter directory (or its "
                           "__cluster_metadata-0), not one file")
    image = load_log(source.entries()).image
    topics = {name: MigratedTopic(t.topic_id, {p: part.replicas for p, part in
                                              t.partitions.items()})
              for name, t in image.topics.by_name.items()}
    cluster_id = source.meta.cluster_id if source.meta is not None else None
    return _Migrated(f"the metadata log in {path}", cluster_id, topics, {})


def _read_dirs(dirs: Sequence[Path]) -> list[BrokerLogDir]:
    """Every dir's meta.properties; they must be one broker's (Kafka refuses a mix too)."""
    found = [read_broker_log_dir(d) for d in dirs]
    first = found[0]
    for other in found[1:]:
        if (other.broker_id, other.cluster_id) != (first.broker_id, first.cluster_id):
            raise BrokerLogDirError(
                f"{other.path}: broker {other.broker_id} of cluster {other.cluster_id}, but "
                f"{first.path} is broker {first.broker_id} of cluster {first.cluster_id}: "
                "give one broker's log.dirs")
    return found


def _dry_label(outcome: str, dry_run: bool) -> str:
    if dry_run and outcome == ReplicaOutcome.WRITE:
        return "would write partition.metadata (--dry-run: nothing written)"
    return outcome


def _summary(checks: Sequence[ReplicaCheck], dry_run: bool) -> list[str]:
    counts: dict[str, int] = {}
    for c in checks:
        counts[c.outcome] = counts.get(c.outcome, 0) + 1
    refused = sum(n for o, n in counts.items() if o in ReplicaOutcome.REFUSED)
    write = "would write partition.metadata" if dry_run else "partition.metadata written"
    lines = [f"summary: {len(checks)} replica directories: {counts.get(ReplicaOutcome.OK, 0)} "
             f"ok, {counts.get(ReplicaOutcome.WRITE, 0)} {write}, {refused} refused"]
    lines += [f"  {outcome}: {counts[outcome]}" for outcome in ReplicaOutcome.REFUSED
              if counts.get(outcome)]
    return lines


def run(args: argparse.Namespace) -> int:
    """Run `prepare-broker`; see the module docstring."""
    dirs = _log_dirs(args.log_dirs)
    load = _check_source_flags(args)
    found = _read_dirs(dirs)
    broker_id, cluster_id = found[0].broker_id, found[0].cluster_id
    releases: list[Callable[[], None]] = []
    try:
        for d in dirs:
            if args.dry_run:  # only asked: a read-only mount has no .lock to open for writing
                holder = voter_lock_holder(d, BROKER_LOG_DIR)
                if holder is not None:
                    raise holder
            else:
                releases.append(acquire_voter_lock(d, BROKER_LOG_DIR))
        return _prepare(args, dirs, load(), broker_id, cluster_id)
    finally:
        for release in reversed(releases):
            release()


def _prepare(args: argparse.Namespace, dirs: Sequence[Path], migrated: _Migrated,
             broker_id: int, cluster_id: str) -> int:
    if migrated.cluster_id is not None and migrated.cluster_id != cluster_id:
        raise BrokerLogDirError(
            f"{dirs[0]}: cluster.id {cluster_id}, but {migrated.source} is cluster "
            f"{migrated.cluster_id}: these are not this cluster's log dirs")
    found = _read_dirs(dirs)  # again, under the locks
    checks = check_replica_dirs(dirs, broker_id, migrated.topics, migrated.left_out)
    missing = missing_replicas(checks, broker_id, migrated.topics)
    refused = [c for c in checks if c.refused]
    wanted = broker_directory_id(cluster_id, broker_id)
    id_actions = [directory_id_action(f, first=i == 0) for i, f in enumerate(found)]

    out = [f"broker {broker_id} of cluster {cluster_id}, checked against {migrated.source}"]
    for f, action in zip(found, id_actions, strict=True):
        said = action if action != "set" else "would set" if args.dry_run else (
            "not set" if refused else "set")
        out.append(f"{f.path}: " + _SAID[said].format(id=wanted, have=f.directory_id))
    for c in checks:
        if args.dry_run or c.outcome != ReplicaOutcome.OK:
            detail = f" ({c.detail})" if c.detail else ""
            out.append(f"{c.path}: {_dry_label(c.outcome, args.dry_run)}{detail}")
    elsewhere = sum(1 for c in checks if not c.first_dir and not c.refused)
    if elsewhere:
        out.append(f"{elsewhere} replica directories are not in the first log dir: Kafka "
                   "reports their directory to the controller at the first start "
                   "(AssignReplicasToDirs), as for any broker with several log dirs")
    for name, partition in missing:
        out.append(f"{name}-{partition}: assigned to broker {broker_id} but in none of these "
                   "log dirs: Kafka creates it empty (a replicated partition copies from its "
                   "leader; check --log-dirs is this broker's whole log.dirs)")
    if refused:
        out += _summary(checks, args.dry_run)
        if not args.dry_run:
            out.append("nothing was written")
        sys.stdout.write("\n".join(out) + "\n")
        sys.stdout.flush()
        sys.stderr.write(
            f"zk2kraft prepare-broker: {len(refused)} directories Kafka would treat as stray "
            "(renamed away, their data deleted) or refuse to load:\n"
            + "".join(f"  {c.path}: {c.outcome}" + (f" ({c.detail})" if c.detail else "")
                      + "\n" for c in refused)
            + "move each out of the log dirs (keep a copy if its data matters), or fix it, "
            "and run again; nothing was written\n")
        return EXIT_FINDINGS
    if not args.dry_run:
        for c in checks:
            if c.outcome == ReplicaOutcome.WRITE and c.topic_id is not None:
                write_partition_metadata(c.path, c.topic_id)
        for f, action in zip(found, id_actions, strict=True):
            if action == "set":
                write_directory_id(f)
    out += _summary(checks, args.dry_run)
    sys.stdout.write("\n".join(out) + "\n")
    return 0
