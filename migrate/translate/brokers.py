"""`RegisterBrokerRecord`s for the ZK-mode brokers under `/brokers/ids`.

Kafka's own migration does not write these: it waits until every ZK broker has restarted with
migration enabled and registered over RPC. zk2kraft copies ahead of that, so it registers each
ZooKeeper broker itself, in the form a migrating ZK broker's registration takes
(`IsMigratingZkBroker`, fenced until it heartbeats, `metadata.version` supported at exactly the
migrated level), so that every partition names a broker the quorum knows (invariant I2). When
the real broker later registers, its own record replaces this one.

The broker epoch is the registration znode's czxid, the epoch ZK-mode Kafka uses for the broker.
The incarnation id is derived from the cluster id, broker id and czxid, so the same tree gives the
same bytes (I6) and a broker that re-registered in ZooKeeper gets a new one.

The module ends with the `broker` kind's registry entry (`migrate.translate.kinds`).
"""

from __future__ import annotations

from collections.abc import Collection, Iterator

from migrate.errors import TranslationError
from migrate.translate.ids import derived_uuid
from migrate.translate.kind import EntityContext, EntityDelta, EntityKind
from verify import ClusterImage, MetadataImage
from verify.delta import ClusterDelta
from writers import (
    SECURITY_PROTOCOLS,
    FieldValue,
    MetadataRecord,
    MetadataVersion,
    record_version,
)
from zkreader import ZK_KINDS, Broker, ClusterSnapshot, EntityKey

__all__ = ["BROKER_KIND", "broker_records"]

_METADATA_VERSION_FEATURE = "metadata.version"


def broker_records(broker: Broker, mv: MetadataVersion, cluster_id: str) -> list[MetadataRecord]:
    """Return the `RegisterBrokerRecord` of one ZooKeeper broker.

    Args:
        broker: the decoded `/brokers/ids/<id>` znode.
        mv: the metadata.version being written (v2 at >= 3.4-IV0, v3 with empty `logDirs` at
            >= 3.7-IV2).
        cluster_id: the cluster id from `/cluster/id` ("" when absent), part of the
            incarnation id.

    Returns:
        A one-element list.

    Raises:
        TranslationError: an endpoint's security protocol is not one Kafka knows.
    """
    path = f"/brokers/ids/{broker.broker_id}"
    endpoints: list[FieldValue] = []
    for ep in broker.endpoints:
        code = SECURITY_PROTOCOLS.get(ep.security_protocol)
        if code is None:
            raise TranslationError(
                f"{path}: listener {ep.listener!r} has unknown security protocol "
                f"{ep.security_protocol!r} (expected one of {', '.join(SECURITY_PROTOCOLS)})"
            )
        endpoints.append(
            {"name": ep.listener, "host": ep.host, "port": ep.port, "securityProtocol": code}
        )
    features: list[FieldValue] = [
        {
            "name": _METADATA_VERSION_FEATURE,
            "minSupportedVersion": mv.feature_level,
            "maxSupportedVersion": mv.feature_level,
        }
    ]
    for name in sorted(broker.features):
        if name == _METADATA_VERSION_FEATURE:
            continue
        low, high = broker.features[name]
        features.append({"name": name, "minSupportedVersion": low, "maxSupportedVersion": high})

    version = record_version("REGISTER_BROKER_RECORD", mv)
    data: dict[str, FieldValue] = {
        "brokerId": broker.broker_id,
        "isMigratingZkBroker": True,
        "incarnationId": derived_uuid(
            "incarnation", cluster_id, broker.broker_id, broker.stat.czxid
        ),
        "brokerEpoch": broker.epoch,
        "endPoints": endpoints,
        "features": features,
        "rack": broker.rack,
        "fenced": True,
        "inControlledShutdown": False,
    }
    if version >= 3:
        data["logDirs"] = []
    return [MetadataRecord("REGISTER_BROKER_RECORD", version, data)]


# ------------------------------------------------------------------------- the broker kind


def _broker_from_nothing(key: EntityKey, snapshot: ClusterSnapshot,
                         ctx: EntityContext) -> EntityDelta:
    out = EntityDelta()
    broker = snapshot.brokers.get(int(key.name))
    if broker is not None:
        out.records = broker_records(broker, ctx.mv, ctx.cluster_id)
    return out


def _diff_broker(key: EntityKey, image: MetadataImage, snap: ClusterSnapshot,
                 ctx: EntityContext) -> EntityDelta:
    broker_id = int(key.name)
    registered = image.cluster.brokers.get(broker_id)
    wanted = _broker_from_nothing(key, snap, ctx)
    if not wanted.records:
        if registered is None:
            return EntityDelta()
        return EntityDelta([MetadataRecord(
            "UNREGISTER_BROKER_RECORD", 0,
            {"brokerId": broker_id, "brokerEpoch": registered.epoch})])
    delta = ClusterDelta(ClusterImage.EMPTY)
    delta.replay_register(wanted.records[0].data)
    copied = delta.apply().brokers[broker_id]
    if copied == registered:
        return EntityDelta()
    if registered is not None and registered.registered_by_broker:
        # The broker registered itself with the stand-in (its own incarnation, epoch = offset
        # of its record). That registration supersedes ours, as it supersedes the ZooKeeper
        # copy in Kafka's controller; overwriting it would make its heartbeats stale. A broker
        # that re-registers in ZooKeeper re-registers with the quorum too, so only listeners
        # or rack that differ from ZooKeeper's are written over.
        if (copied.endpoints, copied.rack) == (registered.endpoints, registered.rack):
            return EntityDelta()
    return wanted


def _broker_keys(snapshot: ClusterSnapshot) -> Iterator[EntityKey]:
    for broker_id in sorted(snapshot.brokers):
        yield EntityKey.broker(broker_id)


def _broker_image_keys(image: MetadataImage, named: Collection[EntityKey]) -> Iterator[EntityKey]:
    for broker_id in sorted(image.cluster.brokers):
        yield EntityKey.broker(broker_id)


BROKER_KIND = EntityKind(
    name="broker",
    zk=ZK_KINDS["broker"],
    from_nothing=_broker_from_nothing,
    diff=_diff_broker,
    snapshot_keys=_broker_keys,
    image_keys=_broker_image_keys,
    records=frozenset({"REGISTER_BROKER_RECORD", "UNREGISTER_BROKER_RECORD"}),
    expected=("cluster",),
    parity=("broker",),
    snapshot_lines=("broker",),
)
