"""Decoders of the cluster-wide znodes: broker registrations, `/controller`, `/controller_epoch`,
`/cluster/id`, `/feature`, the producer-id block, log-dir events and `/migration`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from zkreader import _paths
from zkreader._model import (
    Broker,
    BrokerEndpoint,
    ClusterIdZnode,
    ControllerEpochZnode,
    ControllerZnode,
    FeatureZnode,
    LogDirEvent,
    MigrationZnode,
    ProducerIdBlock,
    ZnodeStat,
)
from zkreader._znode_fields import (
    _ENDPOINT,
    _UUID_TEXT,
    INT16_MAX,
    INT32_MAX,
    INT64_MAX,
    MAX_STRING_BYTES,
    SECURITY_PROTOCOLS,
    _json,
    _kind,
    _Obj,
    _text,
)
from zkreader.errors import ZnodeFormatError


@dataclass(frozen=True, slots=True)
class BrokerZnode:
    """`/brokers/ids/<id>` (JSON versions 1-5; ephemeral; czxid is the broker epoch)."""

    broker_id: int
    VERSIONS = (1, 2, 3, 4, 5)

    @property
    def path(self) -> str:
        return _paths.broker(self.broker_id)

    def decode(self, data: bytes | None, stat: ZnodeStat) -> Broker:
        """Decode a broker registration.

        Raises:
            ZnodeFormatError: malformed JSON, unknown version, bad endpoint or field.
        """
        o = _json(self.path, data)
        version = o.version(self.VERSIONS)
        jmx_port = o.integer("jmx_port", minimum=-1)
        timestamp = o.long_text("timestamp", minimum=0) if o.has("timestamp") else 0
        if version == 1:
            port = o.integer("port", minimum=0)
            endpoints: tuple[BrokerEndpoint, ...] = (
                BrokerEndpoint("PLAINTEXT", o.string("host"), port, "PLAINTEXT"),
            )
        else:
            protocols: dict[str, str] | None = None
            if o.raw.get("listener_security_protocol_map") is not None:
                pmap = o.obj("listener_security_protocol_map").raw
                protocols = {}
                for name, proto in pmap.items():
                    if proto not in SECURITY_PROTOCOLS:
                        raise o.fail(f"listener {name!r} maps to unknown security protocol "
                                     f"{proto!r}")
                    protocols[name] = proto
            raw_endpoints = o._get("endpoints")
            if not isinstance(raw_endpoints, list) or not raw_endpoints:
                raise o.fail("field 'endpoints' must be a non-empty list of LISTENER://host:port")
            endpoints = tuple(_endpoint(o, e, protocols) for e in raw_endpoints)
        rack = o.opt_str("rack") if version >= 3 else None
        features: dict[str, tuple[int, int]] = {}
        if version >= 5 and o.raw.get("features") is not None:
            for name, rng in o.obj("features").raw.items():
                r = _Obj(self.path, rng, f"feature {name!r}")
                lo, hi = (r.integer("min_version", minimum=0, maximum=INT16_MAX),
                          r.integer("max_version", minimum=0, maximum=INT16_MAX))
                if lo > hi:
                    raise o.fail(f"feature {name!r} has min_version {lo} > max_version {hi}")
                features[name] = (lo, hi)
        return Broker(
            broker_id=self.broker_id,
            json_version=version,
            endpoints=endpoints,
            rack=rack,
            jmx_port=jmx_port,
            timestamp_ms=timestamp,
            features=features,
            stat=stat,
        )


def _endpoint(o: _Obj, text: Any, protocols: Mapping[str, str] | None) -> BrokerEndpoint:
    if not isinstance(text, str):
        raise o.fail(f"endpoint is {_kind(text)}, expected 'LISTENER://host:port'")
    if len(text.encode()) > MAX_STRING_BYTES:
        raise o.fail(f"endpoint is {len(text.encode())} bytes long; a metadata record field "
                     f"holds at most {MAX_STRING_BYTES}")
    match = _ENDPOINT.match(text)
    if not match:
        raise o.fail(f"endpoint {text!r} is not 'LISTENER://host:port'")
    listener, host, port_text = match.groups()
    port = int(port_text)
    if not 0 <= port <= 65535:
        raise o.fail(f"endpoint {text!r} has port {port} outside 0..65535")
    if protocols is None:
        protocol = listener.upper()
        if protocol not in SECURITY_PROTOCOLS:
            raise o.fail(f"endpoint {text!r}: listener is not a security protocol and the "
                         "znode has no listener_security_protocol_map")
    else:
        try:
            protocol = protocols[listener]
        except KeyError:
            raise o.fail(f"endpoint {text!r}: listener {listener!r} is not in "
                         "listener_security_protocol_map") from None
    return BrokerEndpoint(listener=listener, host=host, port=port, security_protocol=protocol)


@dataclass(frozen=True, slots=True)
class ControllerZnodeKind:
    """`/controller` (v1 before Kafka 3.4, v2 with `kraftControllerEpoch`)."""

    VERSIONS = (1, 2)

    @property
    def path(self) -> str:
        return _paths.CONTROLLER

    def decode(self, data: bytes | None, stat: ZnodeStat) -> ControllerZnode:
        """Raises: ZnodeFormatError on malformed data or an unknown version."""
        o = _json(self.path, data)
        version = o.version(self.VERSIONS)
        return ControllerZnode(
            broker_id=o.integer("brokerid", minimum=0),
            json_version=version,
            timestamp_ms=o.long_text("timestamp", minimum=0) if o.has("timestamp") else 0,
            kraft_controller_epoch=o.integer("kraftControllerEpoch", minimum=-1) if version >= 2
            else -1,
            stat=stat,
        )


@dataclass(frozen=True, slots=True)
class ControllerEpochZnodeKind:
    """`/controller_epoch`: plain decimal text (not JSON); its version is the fencing token."""

    @property
    def path(self) -> str:
        return _paths.CONTROLLER_EPOCH

    def decode(self, data: bytes | None, stat: ZnodeStat) -> ControllerEpochZnode:
        """Raises: ZnodeFormatError unless the data is a non-negative decimal integer."""
        text = _text(self.path, data).strip()
        if not text.isascii() or not text.isdigit():
            raise ZnodeFormatError(self.path, f"data {text[:40]!r} is not a decimal epoch >= 0")
        if int(text) > INT32_MAX:
            raise ZnodeFormatError(self.path, f"epoch {text} is past the largest value {INT32_MAX}")
        return ControllerEpochZnode(epoch=int(text), stat=stat)


@dataclass(frozen=True, slots=True)
class ClusterIdZnodeKind:
    """`/cluster/id`: `{"version":"1","id":"<Uuid>"}` — the version is a string."""

    @property
    def path(self) -> str:
        return _paths.CLUSTER_ID

    def decode(self, data: bytes | None, stat: ZnodeStat) -> ClusterIdZnode:
        """Raises: ZnodeFormatError on malformed data or a version other than "1"."""
        o = _json(self.path, data)
        version = o.string("version")
        if version != "1":
            raise o.fail(f"unknown version {version!r} (supported: \"1\")")
        cluster_id = o.string("id")
        if not _UUID_TEXT.match(cluster_id):
            raise o.fail(f"field 'id' is {cluster_id!r}, not a 22-character cluster id")
        return ClusterIdZnode(cluster_id=cluster_id, stat=stat)


@dataclass(frozen=True, slots=True)
class FeatureZnodeKind:
    """`/feature`: v1 has min and max version levels, v2 only max; status 0 or 1."""

    VERSIONS = (1, 2)

    @property
    def path(self) -> str:
        return _paths.FEATURE

    def decode(self, data: bytes | None, stat: ZnodeStat) -> FeatureZnode:
        """Raises: ZnodeFormatError on malformed data or an unknown version/status."""
        o = _json(self.path, data)
        version = o.version(self.VERSIONS)
        status = o.integer("status")
        if status not in (0, 1):
            raise o.fail(f"unknown status {status} (0 = disabled, 1 = enabled)")
        features: dict[str, tuple[int | None, int]] = {}
        for name, levels in o.obj("features").raw.items():
            f = _Obj(self.path, levels, f"feature {name!r}")
            hi = f.integer("max_version_level", minimum=0, maximum=INT16_MAX)
            lo = (f.integer("min_version_level", minimum=0, maximum=INT16_MAX)
                  if version == 1 else None)
            if lo is not None and lo > hi:
                raise o.fail(f"feature {name!r} has min_version_level {lo} > max {hi}")
            features[name] = (lo, hi)
        return FeatureZnode(json_version=version, status=status, features=features, stat=stat)


@dataclass(frozen=True, slots=True)
class ProducerIdBlockZnode:
    """`/latest_producer_id_block`: v1, block bounds as decimal strings; broker -1 from KRaft."""

    VERSIONS = (1,)

    @property
    def path(self) -> str:
        return _paths.PRODUCER_ID_BLOCK

    def decode(self, data: bytes | None, stat: ZnodeStat) -> ProducerIdBlock | None:
        """Decode the block; None when the znode is empty.

        Kafka pre-creates this path with no data (`KafkaZkClient.createTopLevelPaths`) and fills
        it only when a broker first asks for a block; its producer-id manager and its migration
        (`ZkMigrationClient.migrateProducerId`) both read "no data" as "no block handed out yet".
        A fresh ZK-mode cluster has exactly that, so it is not malformed.

        Raises: ZnodeFormatError on malformed data, unknown version or an inverted block.
        """
        if not data:
            return None
        o = _json(self.path, data)
        version = o.version(self.VERSIONS)
        start = o.long_text("block_start", minimum=0)
        end = o.long_text("block_end", minimum=0)
        if end < start:
            raise o.fail(f"block_end {end} < block_start {start}")
        return ProducerIdBlock(
            json_version=version,
            broker_id=o.integer("broker", minimum=-1),
            block_start=start,
            block_end=end,
            stat=stat,
        )


@dataclass(frozen=True, slots=True)
class LogDirEventZnode:
    """`/log_dir_event_notification/log_dir_event_<seq>`: v1, event 1 = LogDirFailure."""

    name: str
    VERSIONS = (1,)

    @property
    def path(self) -> str:
        return _paths.log_dir_event(self.name)

    def decode(self, data: bytes | None, stat: ZnodeStat) -> LogDirEvent:
        """Raises: ZnodeFormatError on malformed data, unknown version or event code."""
        o = _json(self.path, data)
        o.version(self.VERSIONS)
        event = o.integer("event")
        if event != 1:
            raise o.fail(f"unknown event {event} (1 = LogDirFailure)")
        return LogDirEvent(name=self.name, broker_id=o.integer("broker", minimum=0), event=event,
                           stat=stat)


@dataclass(frozen=True, slots=True)
class MigrationZnodeKind:
    """`/migration`: only version 0 exists (Kafka's decoder rejects anything else)."""

    VERSIONS = (0,)

    @property
    def path(self) -> str:
        return _paths.MIGRATION

    def decode(self, data: bytes | None, stat: ZnodeStat) -> MigrationZnode:
        """Raises: ZnodeFormatError on malformed data or a version other than 0."""
        o = _json(self.path, data)
        o.version(self.VERSIONS)
        return MigrationZnode(
            kraft_controller_id=o.integer("kraft_controller_id", minimum=-1),
            kraft_controller_epoch=o.integer("kraft_controller_epoch", minimum=-1),
            kraft_metadata_offset=o.integer("kraft_metadata_offset", minimum=-1, maximum=INT64_MAX),
            kraft_metadata_epoch=o.integer("kraft_metadata_epoch", minimum=-1),
            stat=stat,
        )
