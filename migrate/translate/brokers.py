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
"""

from __future__ import annotations

from migrate.errors import TranslationError
from migrate.translate.ids import derived_uuid
from writers import (
    SECURITY_PROTOCOLS,
    FieldValue,
    MetadataRecord,
    MetadataVersion,
    record_version,
)
from zkreader import Broker

__all__ = ["broker_records"]

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
