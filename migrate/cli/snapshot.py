"""`zk2kraft snapshot`: read the Kafka tree and dump it as redacted JSON lines (read-only).

The command only reads: no znode is created, changed or deleted. With `--out FILE` the dump is
written to a 0600 file that appears complete or not at all (temporary file, fsync, rename), so a
failed read never leaves a half dump that looks whole.

The output is one JSON object per znode-derived entity: `{"kind": K, "path": P, "data": {...},
"stat": {...}}`. `path` is the znode (relative to the chroot, as Kafka names it), `data` the
decoded content in the model's snake_case names, `stat` the znode's Stat (`czxid`, `mzxid`,
`version`, `ctime_ms`, `mtime_ms`, `ephemeral_owner`, `num_children`). Kinds, in output order:
cluster_id, controller, controller_epoch, feature, migration, broker, topic, partition_state,
pending_deletion (no stat), config, acl, delegation_token, producer_id_block, log_dir_event.
`zk2kraft snapshot --help` says the same.

Redaction is strict and happens here, before anything is serialized (I7): SCRAM credentials,
password-type and JAAS configs, anything that looks like Kafka's encrypted-password encoding, and
delegation-token details become `writers.REDACTED` (`"<redacted>"`), by the one rule every printer
uses (`writers.is_sensitive_config`). Only the key names stay visible, so an operator
can still see that a credential exists.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Iterator, Mapping
from typing import Any

import orjson

from migrate._private_file import check_output_path, write_private
from migrate._progress import ProgressBars, progress_wanted
from migrate.cli.args import SUB_EPILOG, Subparsers, add_zookeeper
from migrate.cli.std_streams import stop_at_stdout_failure
from migrate.flags.zookeeper import connect_options, read_snapshot
from writers import REDACTED, is_sensitive_config
from zkreader import AclResource, ClusterSnapshot, ConfigZnode, PartitionState, ZnodeStat

__all__ = ["add_parser", "redact_config", "run", "snapshot_entities", "snapshot_lines"]


_SNAPSHOT_FORMAT = """\
output: one JSON object per line,
  {"kind": K, "path": "/znode/path", "data": {...}, "stat": {"czxid", "mzxid", "version",
   "ctime_ms", "mtime_ms", "ephemeral_owner", "num_children"}}
  kinds in order: cluster_id, controller, controller_epoch, feature, migration, broker, topic,
  partition_state, pending_deletion (stat null), config, acl, delegation_token,
  producer_id_block, log_dir_event. Paths are relative to the chroot. Redacted as
  "<redacted>": SCRAM credentials, password/JAAS/secret configs, encrypted values and
  delegation-token details.

"""


def add_parser(sub: Subparsers) -> None:
    """Register `zk2kraft snapshot` and its flags (`cli.build_parser` calls it)."""
    p = sub.add_parser(
        "snapshot",
        help="read-only dump of the Kafka tree as JSON lines (secrets redacted)",
        description="Read the whole Kafka tree from ZooKeeper (read-only) and print one JSON "
        "object per znode-derived entity. SCRAM credentials and passwords are redacted.",
        epilog=_SNAPSHOT_FORMAT + SUB_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_zookeeper(p)
    p.add_argument("--out", metavar="FILE", help="write to FILE (mode 0600) instead of stdout")
    p.add_argument("--quiet", action="store_true", help="no progress bars")


def run(args: argparse.Namespace) -> int:
    """Run `snapshot`; returns 0 (errors propagate to `cli.main` with their exit codes)."""
    to_stdout = args.out is None or args.out == "-"
    check_output_path("--out", args.out)
    options = connect_options(args)
    wanted = progress_wanted(quiet=args.quiet, stdout_is_document=to_stdout)
    with ProgressBars(enabled=wanted) as bars:
        snapshot = read_snapshot(options, bars)
    if to_stdout:
        stop_at_stdout_failure()  # the output is the work
        out = sys.stdout.buffer
        for line in snapshot_lines(snapshot):
            out.write(line)
        out.flush()
    else:
        write_private("--out", args.out, snapshot_lines(snapshot))
    return 0


# The output: one JSON line per entity, secrets redacted.
def redact_config(config: Mapping[str, str]) -> dict[str, str]:
    """Return `config` with every sensitive value replaced by `REDACTED`, keys sorted."""
    return {
        k: (REDACTED if is_sensitive_config(k, v) else v) for k, v in sorted(config.items())
    }


def _stat(stat: ZnodeStat) -> dict[str, int]:
    return {
        "czxid": stat.czxid,
        "mzxid": stat.mzxid,
        "version": stat.version,
        "ctime_ms": stat.ctime_ms,
        "mtime_ms": stat.mtime_ms,
        "ephemeral_owner": stat.ephemeral_owner,
        "num_children": stat.num_children,
    }


def _state(state: PartitionState) -> dict[str, Any]:
    """Fast path for the most numerous entity (one per partition)."""
    return {
        "topic": state.topic,
        "partition": state.partition,
        "leader": state.leader,
        "leader_epoch": state.leader_epoch,
        "controller_epoch": state.controller_epoch,
        "isr": list(state.isr),
        "leader_recovery_state": state.leader_recovery_state,
    }


def _plain(value: Any) -> Any:
    """Model value -> JSON-ready value (dataclass fields minus `stat`, str keys, lists)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            f.name: _plain(getattr(value, f.name))
            for f in dataclasses.fields(value)
            if f.name != "stat"
        }
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, tuple | list | frozenset | set):
        items = [_plain(v) for v in value]
        return sorted(items) if isinstance(value, frozenset | set) else items
    return value


def _entity(kind: str, path: str, obj: Any) -> dict[str, Any]:
    return {"kind": kind, "path": path, "data": _plain(obj), "stat": _stat(obj.stat)}


def _config(znode: ConfigZnode) -> dict[str, Any]:
    kind = znode.entity_path.split("/", 1)[0]
    return {
        "kind": "config",
        "path": f"/config/{znode.entity_path}",
        "data": {
            "entity_type": "users-clients" if "/clients/" in znode.entity_path else kind,
            "entity_path": znode.entity_path,
            "config": redact_config(znode.config),
        },
        "stat": _stat(znode.stat),
    }


def _acl_path(res: AclResource) -> str:
    if res.pattern_type == "LITERAL":
        return f"/kafka-acl/{res.resource_type}/{res.name}"
    return f"/kafka-acl-extended/{res.pattern_type.lower()}/{res.resource_type}/{res.name}"


def snapshot_entities(snapshot: ClusterSnapshot) -> Iterator[dict[str, Any]]:
    """Yield the redacted entity objects of a snapshot, in a stable order.

    Args:
        snapshot: the tree as read by `zkreader.read_cluster`.
    """
    s = snapshot
    if s.cluster_id is not None:
        yield _entity("cluster_id", "/cluster/id", s.cluster_id)
    if s.controller is not None:
        yield _entity("controller", "/controller", s.controller)
    if s.controller_epoch is not None:
        yield _entity("controller_epoch", "/controller_epoch", s.controller_epoch)
    if s.feature is not None:
        yield _entity("feature", "/feature", s.feature)
    if s.migration is not None:
        yield _entity("migration", "/migration", s.migration)
    for broker_id in sorted(s.brokers):
        yield _entity("broker", f"/brokers/ids/{broker_id}", s.brokers[broker_id])
    for name in sorted(s.topics):
        yield _entity("topic", f"/brokers/topics/{name}", s.topics[name])
    for (topic, partition) in sorted(s.partition_states):
        state = s.partition_states[(topic, partition)]
        path = f"/brokers/topics/{topic}/partitions/{partition}/state"
        yield {"kind": "partition_state", "path": path, "data": _state(state),
               "stat": _stat(state.stat)}
    for name in sorted(s.pending_deletions):
        yield {"kind": "pending_deletion", "path": f"/admin/delete_topics/{name}",
               "data": {"topic": name}, "stat": None}
    configs: list[ConfigZnode] = []
    for group in (s.topic_configs, s.broker_configs, s.user_configs, s.client_configs,
                  s.ip_configs):
        configs.extend(group[key] for key in sorted(group))
    configs.extend(s.user_client_configs[key] for key in sorted(s.user_client_configs))
    for znode in configs:
        yield _config(znode)
    for res in sorted(s.acls, key=_acl_path):
        yield _entity("acl", _acl_path(res), res)
    for token_id in sorted(s.delegation_tokens):
        token = s.delegation_tokens[token_id]
        yield {
            "kind": "delegation_token",
            "path": f"/delegation_token/tokens/{token_id}",
            "data": REDACTED,
            "stat": _stat(token.stat),
        }
    if s.producer_id_block is not None:
        yield _entity("producer_id_block", "/latest_producer_id_block", s.producer_id_block)
    for event in sorted(s.log_dir_events, key=lambda e: e.name):
        yield _entity("log_dir_event", f"/log_dir_event_notification/{event.name}", event)


def snapshot_lines(snapshot: ClusterSnapshot) -> Iterator[bytes]:
    """Yield `snapshot_entities` as JSON lines (each ends with a newline)."""
    for entity in snapshot_entities(snapshot):
        yield orjson.dumps(entity, option=orjson.OPT_APPEND_NEWLINE)
