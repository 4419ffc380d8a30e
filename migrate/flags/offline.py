"""`--offline` and `--target-kafka`: the flags of a migration with every broker stopped.

Offline means: every broker is stopped, ZooKeeper is quiet, and the cluster will never go back to
ZooKeeper. Then zk2kraft reads once, writes a complete, final log (`ZkMigrationState`
POST_MIGRATION, no broker registrations: each broker registers itself when it starts in KRaft
mode; no partition leaders: the controller elects each from its ISR once a member is unfenced,
so every follower knows its leader when it learns of it), and touches nothing in ZooKeeper,
so going back before the KRaft controllers first start is just starting the old brokers again.
Because Kafka 4.x has no ZooKeeper and no migration code, the offline path is also the one way
straight from a ZooKeeper cluster to Kafka 4.x (`--target-kafka 4.x`). docs/design/offline.md
records why, with what real Kafka did.

The blockers themselves (`BROKER_STILL_RUNNING`, `CONTROLLER_HELD`) are pre-flight rules
(`migrate.preflight.checks`), so `plan`, `migrate` and `verify` judge them the same way.
"""

from __future__ import annotations

from migrate.errors import BadFlagError, BlockersFoundError
from migrate.preflight.checks import preflight
from migrate.translate.framing import (
    DEFAULT_METADATA_VERSION,
    KAFKA_4_TARGETS,
    TARGET_4X,
    TARGET_39,
    parse_target_version,
    require_target,
)
from writers import MetadataVersion
from zkreader import ClusterSnapshot

__all__ = ["check_still_stopped", "resolve_metadata_version"]

_STOPPED_RULES = frozenset({"BROKER_STILL_RUNNING", "CONTROLLER_HELD"})


def resolve_metadata_version(metadata_version: MetadataVersion | None, *, offline: bool,
                             target_kafka: str, upgrade_after: bool = False) -> MetadataVersion:
    """The metadata.version to write, from `--metadata-version`, `--offline`, `--target-kafka`.

    Args:
        metadata_version: the parsed `--metadata-version`, or None for the target's default.
        offline: `--offline` was given.
        target_kafka: `--target-kafka`.
        upgrade_after: `plan`'s online path to a 4.N line: the migration writes 3.9's level
            (it ends on Kafka 3.9) and the printed sequence upgrades afterwards.

    Raises:
        BadFlagError: `--target-kafka 4.N` without `--offline` where the migration itself
            would have to run on Kafka 4 (it has no ZooKeeper and no migration code), `4.x`
            online (the upgrade needs the line), or a metadata.version the target cannot run.
    """
    if target_kafka in KAFKA_4_TARGETS and not offline:
        if not upgrade_after:
            raise BadFlagError(
                f"--target-kafka {target_kafka} needs --offline: Kafka 4 has no ZooKeeper and no "
                "migration code, so only a final log written with every broker stopped can go "
                "to it directly. Online, the migration ends on Kafka 3.9 and Kafka's rolling "
                f"upgrade takes the cluster on: run this without --target-kafka (plan "
                f"--target-kafka {target_kafka} prints the whole sequence, upgrade included)")
        if target_kafka == TARGET_4X:
            raise BadFlagError(
                "--target-kafka 4.x without --offline: name the 4.N line (4.0 ... 4.4); the "
                "printed upgrade raises the features to that release's levels")
        target_kafka = TARGET_39  # what the migration itself writes; the upgrade follows
    mv = metadata_version or parse_target_version(DEFAULT_METADATA_VERSION[target_kafka])
    require_target(mv, target_kafka)
    return mv


def check_still_stopped(snapshot: ClusterSnapshot) -> None:
    """`verify --offline`: refuse (exit 1) while a broker or ZooKeeper controller is running.

    Raises:
        BlockersFoundError: lists each registered broker and the held `/controller`.
    """
    found = [f for f in preflight(snapshot, offline=True).blockers if f.code in _STOPPED_RULES]
    if found:
        raise BlockersFoundError(
            "--offline: the cluster is not stopped:\n"
            + "\n".join(f"  {f.code} {f.path}: {f.message}" for f in found)
        )
