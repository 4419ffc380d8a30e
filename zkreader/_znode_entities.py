"""Decoders of the entity znodes: topics, partition states, configs, ACLs and delegation tokens."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from zkreader import _paths
from zkreader._model import (
    AclEntry,
    AclResource,
    ConfigZnode,
    DelegationToken,
    PartitionState,
    Topic,
    ZnodeStat,
    new_partition_state,
)
from zkreader._znode_fields import (
    ACL_OPERATIONS,
    ACL_PERMISSIONS,
    INT32_MAX,
    INT64_MAX,
    MAX_STRING_BYTES,
    _ids_ok,
    _json,
    _kind,
    _Obj,
    _partition_map,
    decode_uuid,
    topic_name_problem,
)
from zkreader.errors import ZnodeFormatError


@dataclass(frozen=True, slots=True)
class TopicZnode:
    """`/brokers/topics/<name>` (v1 assignment; v2 + reassignment; v3 + topic_id)."""

    name: str
    VERSIONS = (1, 2, 3)

    @property
    def path(self) -> str:
        return _paths.topic(self.name)

    def decode(self, data: bytes | None, stat: ZnodeStat) -> Topic:
        """Raises: ZnodeFormatError on an illegal topic name, malformed data, an unknown
        version or a bad assignment."""
        problem = topic_name_problem(self.name)
        if problem is not None:
            raise ZnodeFormatError(self.path, problem)
        o = _json(self.path, data)
        version = o.version(self.VERSIONS)
        assignment = _partition_map(o, "partitions", allow_empty_lists=False)
        adding = _partition_map(o, "adding_replicas", allow_empty_lists=True) if o.raw.get(
            "adding_replicas") is not None else {}
        removing = _partition_map(o, "removing_replicas", allow_empty_lists=True) if o.raw.get(
            "removing_replicas") is not None else {}
        for key, extra in (("adding_replicas", adding), ("removing_replicas", removing)):
            unknown = sorted(set(extra) - set(assignment))
            if unknown:
                raise o.fail(f"field {key!r} names partitions {unknown} not in 'partitions'")
        topic_id = o.opt_str("topic_id")
        if topic_id is not None:
            decode_uuid(self.path, "topic_id", topic_id)
        return Topic(
            name=self.name,
            json_version=version,
            topic_id=topic_id,
            assignment=assignment,
            adding_replicas={p: r for p, r in adding.items() if r},
            removing_replicas={p: r for p, r in removing.items() if r},
            stat=stat,
        )


@dataclass(frozen=True, slots=True)
class PartitionStateZnode:
    """`/brokers/topics/<t>/partitions/<p>/state` (v1; partition epoch = znode version)."""

    topic: str
    partition: int
    VERSIONS = (1,)

    @property
    def path(self) -> str:
        return _paths.partition_state(self.topic, self.partition)

    def decode(self, data: bytes | None, stat: ZnodeStat) -> PartitionState:
        """Raises: ZnodeFormatError on malformed data or an unknown version.

        The common, well-formed case is checked inline (a 100,000-partition read decodes this
        100,000 times); anything it does not accept goes through the field-by-field check,
        which names the problem.
        """
        raw: Any = None
        if data:
            try:
                raw = orjson.loads(data)
            except orjson.JSONDecodeError:
                raw = None
        if type(raw) is dict:
            version = raw.get("version")
            leader = raw.get("leader")
            epoch = raw.get("leader_epoch")
            cepoch = raw.get("controller_epoch")
            isr = raw.get("isr")
            recovery = raw.get("leader_recovery_state", 0)
            if (version == 1 and type(version) is int and type(leader) is int
                    and -1 <= leader <= INT32_MAX and type(epoch) is int
                    and 0 <= epoch <= INT32_MAX and type(cepoch) is int
                    and 0 <= cepoch <= INT32_MAX
                    and type(isr) is list and _ids_ok(isr) and type(recovery) is int
                    and 0 <= recovery <= 1):
                return new_partition_state(self.topic, self.partition, leader, epoch, cepoch,
                                           tuple(isr), recovery, stat)
        return self._decode_strict(data, stat)

    def _decode_strict(self, data: bytes | None, stat: ZnodeStat) -> PartitionState:
        o = _json(self.path, data)
        o.version(self.VERSIONS)
        recovery = o.opt_int("leader_recovery_state", 0)
        if recovery not in (0, 1):
            raise o.fail(f"unknown leader_recovery_state {recovery} (0 RECOVERED, 1 RECOVERING)")
        return PartitionState(
            topic=self.topic,
            partition=self.partition,
            leader=o.integer("leader", minimum=-1),
            leader_epoch=o.integer("leader_epoch", minimum=0),
            controller_epoch=o.integer("controller_epoch", minimum=0),
            isr=o.int_list("isr"),
            leader_recovery_state=recovery,
            stat=stat,
        )


@dataclass(frozen=True, slots=True)
class ConfigZnodeKind:
    """`/config/<entity_path>`: `{"version":1,"config":{"key":"string value"}}`."""

    entity_path: str
    VERSIONS = (1,)

    @property
    def path(self) -> str:
        return _paths.config(self.entity_path)

    def decode(self, data: bytes | None, stat: ZnodeStat) -> ConfigZnode:
        """Raises: ZnodeFormatError on malformed data, an unknown version or a non-string value.

        The error names the key only, never the value: values may be secrets. A znode without
        data is an empty config: Kafka creates `/config/users/<u>` empty when only user+client
        quotas exist, and reads it as no config.
        """
        if not data:
            return ConfigZnode(entity_path=self.entity_path, config={}, stat=stat)
        o = _json(self.path, data)
        o.version(self.VERSIONS)
        config = o.obj("config").raw
        for key, value in config.items():
            if len(key.encode()) > MAX_STRING_BYTES:
                raise o.fail(f"a config key is {len(key.encode())} bytes long; a ConfigRecord "
                             f"name holds at most {MAX_STRING_BYTES}")
            if not isinstance(value, str):
                raise o.fail(f"config key {key!r} has {_kind(value)} value, expected a string")
            if len(value) > MAX_STRING_BYTES // 3 and len(value.encode()) > MAX_STRING_BYTES:
                raise o.fail(f"config key {key!r} has a value of {len(value.encode())} bytes; a "
                             f"ConfigRecord value holds at most {MAX_STRING_BYTES}")
        return ConfigZnode(entity_path=self.entity_path, config=config, stat=stat)


@dataclass(frozen=True, slots=True)
class AclZnode:
    """`/kafka-acl/<Type>/<name>` (pattern LITERAL) or `/kafka-acl-extended/<p>/<Type>/<name>`."""

    pattern_type: str  # LITERAL or PREFIXED
    resource_type: str
    name: str
    VERSIONS = (1,)

    @property
    def path(self) -> str:
        if self.pattern_type == "LITERAL":
            return _paths.acl_literal_resource(self.resource_type, self.name)
        return _paths.acl_extended_resource(self.pattern_type.lower(), self.resource_type,
                                            self.name)

    def decode(self, data: bytes | None, stat: ZnodeStat) -> AclResource:
        """Raises: ZnodeFormatError on malformed data, unknown version, operation or permission."""
        if self.resource_type not in _paths.ACL_RESOURCE_TYPES:
            raise ZnodeFormatError(self.path, f"unknown ACL resource type {self.resource_type!r}")
        o = _json(self.path, data)
        o.version(self.VERSIONS)
        raw_acls = o._get("acls")
        if not isinstance(raw_acls, list):
            raise o.fail(f"field 'acls' is {_kind(raw_acls)}, expected a list")
        entries = []
        for raw in raw_acls:
            a = _Obj(self.path, raw, "an ACL entry")
            principal = a.string("principal")
            if ":" not in principal:
                raise o.fail(f"ACL principal {principal!r} is not 'Type:name'")
            permission = a.string("permissionType")
            if permission not in ACL_PERMISSIONS:
                raise o.fail(f"unknown ACL permissionType {permission!r}")
            operation = a.string("operation")
            if operation not in ACL_OPERATIONS:
                raise o.fail(f"unknown ACL operation {operation!r}")
            entries.append(AclEntry(principal, permission, operation, a.string("host")))
        return AclResource(
            pattern_type=self.pattern_type,
            resource_type=self.resource_type,
            name=self.name,
            acls=tuple(entries),
            stat=stat,
        )


@dataclass(frozen=True, slots=True)
class TokenZnode:
    """`/delegation_token/tokens/<tokenId>` (v1-3; v3 adds tokenRequester). No HMAC in ZK."""

    token_id: str
    VERSIONS = (1, 2, 3)

    @property
    def path(self) -> str:
        return _paths.token(self.token_id)

    def decode(self, data: bytes | None, stat: ZnodeStat) -> DelegationToken:
        """Raises: ZnodeFormatError on malformed data, unknown version or mismatched tokenId."""
        o = _json(self.path, data)
        version = o.version(self.VERSIONS)
        token_id = o.string("tokenId")
        if token_id != self.token_id:
            raise o.fail(f"field 'tokenId' is {token_id!r} but the znode is {self.token_id!r}")
        renewers = o._get("renewers")
        if not isinstance(renewers, list) or not all(isinstance(r, str) for r in renewers):
            raise o.fail("field 'renewers' must be a list of strings")
        return DelegationToken(
            token_id=token_id,
            json_version=version,
            owner=o.string("owner"),
            requester=o.string("tokenRequester") if version >= 3 else o.opt_str("tokenRequester"),
            renewers=tuple(renewers),
            issue_timestamp_ms=o.integer("issueTimestamp", minimum=0, maximum=INT64_MAX),
            max_timestamp_ms=o.integer("maxTimestamp", minimum=0, maximum=INT64_MAX),
            expiry_timestamp_ms=o.integer("expiryTimestamp", minimum=0, maximum=INT64_MAX),
            stat=stat,
        )
