"""The EXPECTED image: what a correct migration of a `ClusterSnapshot` must replay to.

Built straight from ZooKeeper's model, independently of the translator
(`migrate.translate.translation`),
so parity is a second implementation of Kafka 3.9's mapping (`ZkMigrationClient`)
that catches translation and codec bugs instead of repeating them:

- brokers: id → endpoints (listener, host, port, protocol), rack, epoch = the znode's czxid;
- topics: the ones `zkreader.migrating_topic` says migrate (no pending deletion, an id);
- partitions: replicas from the topic znode; ISR, leader, leader epoch from the state znode;
  partition epoch = the state znode's version; missing state → ISR = replicas, leader = first
  replica, epochs 0; adding/removing replicas and leader recovery state carried; offline
  (every broker stopped) every leader is -1, the controller electing one from the ISR when
  the first ISR member is unfenced (docs/design/offline.md);
- configs: topic configs by name, broker configs by id with `<default>` → "";
- client quotas: names desanitized (`writers.desanitize`, Kafka's `Sanitizer`: a malformed
  escape such as `%zz` is an error there, so such an entity is left out, with a warning),
  `<default>` → None;
- SCRAM: parsed from `/config/users` (`salt=…,stored_key=…,server_key=…,iterations=…`);
- ACLs: literal and extended, Kafka's byte codes; ids are synthetic (parity ignores ACL ids);
- producer ids: next = block_end + 1 (never block_start: KAFKA-15552);
- delegation tokens: principals desanitized, no HMAC.

Malformed secrets are skipped with a warning that names the user, never the value.
"""

from __future__ import annotations

import base64
import binascii
import logging
from collections.abc import Mapping

from verify.image import (
    AclsImage,
    BrokerEndpoint,
    BrokerRegistration,
    ClientQuotasImage,
    ClusterImage,
    ConfigResource,
    ConfigsImage,
    DelegationTokenData,
    DelegationTokensImage,
    FeaturesImage,
    FrozenMap,
    MetadataImage,
    PartitionImage,
    ProducerIdsImage,
    QuotaEntity,
    ScramCredential,
    ScramImage,
    StandardAcl,
    TopicImage,
    TopicsImage,
)
from writers import (
    ACL_OPERATIONS,
    ACL_PATTERN_TYPES,
    ACL_PERMISSIONS,
    ACL_RESOURCE_TYPES,
    SCRAM_MECHANISMS,
    SECURITY_PROTOCOLS,
    desanitize,
    kafka_code,
)
from zkreader import ClusterSnapshot, ConfigZnode, migrating_topic, paused_gc

__all__ = ["expected_image", "parse_scram"]

log = logging.getLogger(__name__)

DEFAULT_ENTITY = "<default>"


def _entity_name(name: str) -> str | None:
    return None if name == DEFAULT_ENTITY else desanitize(name)


def parse_scram(text: str) -> ScramCredential | None:
    """Parse ZooKeeper's SCRAM string; None if malformed (the caller says which user).

    The format is Kafka's `ScramCredentialUtils.credentialToString`:
    `salt=<b64>,stored_key=<b64>,server_key=<b64>,iterations=<n>`.
    """
    fields: dict[str, str] = {}
    for part in text.split(","):
        key, sep, value = part.partition("=")
        if not sep:
            return None
        fields[key.strip()] = value.strip()
    try:
        return ScramCredential(
            base64.b64decode(fields["salt"], validate=True),
            base64.b64decode(fields["stored_key"], validate=True),
            base64.b64decode(fields["server_key"], validate=True),
            int(fields["iterations"]),
        )
    except (KeyError, ValueError, binascii.Error):
        return None


def _brokers(snapshot: ClusterSnapshot) -> ClusterImage:
    brokers = {}
    for broker_id, b in snapshot.brokers.items():
        endpoints = tuple(
            BrokerEndpoint(e.listener, e.host, e.port,
                           SECURITY_PROTOCOLS.get(e.security_protocol, -1))
            for e in b.endpoints
        )
        brokers[broker_id] = BrokerRegistration(
            broker_id=broker_id, epoch=b.stat.czxid, incarnation_id="", endpoints=endpoints,
            features=FrozenMap(), rack=b.rack, fenced=True, in_controlled_shutdown=False,
            is_migrating_zk_broker=True,
        )
    return ClusterImage(FrozenMap(brokers), FrozenMap())


def _topics(snapshot: ClusterSnapshot, offline: bool) -> TopicsImage:
    by_id: dict[str, TopicImage] = {}
    by_name: dict[str, TopicImage] = {}
    for name, t in snapshot.topics.items():
        if not migrating_topic(snapshot, name):
            continue
        partitions = {}
        for p, replicas in t.assignment.items():
            state = snapshot.partition_states.get((name, p))
            adding = tuple(t.adding_replicas.get(p, ()))
            removing = tuple(t.removing_replicas.get(p, ()))
            if state is None:
                part = PartitionImage(
                    replicas=tuple(replicas), isr=tuple(replicas), removing_replicas=removing,
                    adding_replicas=adding,
                    leader=replicas[0] if replicas and not offline else -1,
                    leader_recovery_state=0, leader_epoch=0, partition_epoch=0,
                )
            else:
                part = PartitionImage(
                    replicas=tuple(replicas), isr=tuple(state.isr), removing_replicas=removing,
                    adding_replicas=adding, leader=-1 if offline else state.leader,
                    leader_recovery_state=state.leader_recovery_state,
                    leader_epoch=state.leader_epoch, partition_epoch=state.stat.version,
                )
            partitions[p] = part
        topic = TopicImage(name, t.topic_id or "", FrozenMap(partitions))
        by_id[topic.topic_id] = topic
        by_name[name] = topic
    return TopicsImage(FrozenMap(by_id), FrozenMap(by_name))


def _configs(snapshot: ClusterSnapshot, topics: TopicsImage) -> ConfigsImage:
    resources: dict[ConfigResource, FrozenMap[str, str]] = {}
    for name, znode in snapshot.topic_configs.items():
        if name in topics.by_name and znode.config:
            resources[(2, name)] = FrozenMap(dict(znode.config))
    for name, znode in snapshot.broker_configs.items():
        if znode.config:
            resources[(4, "" if name == DEFAULT_ENTITY else name)] = FrozenMap(dict(znode.config))
    return ConfigsImage(FrozenMap(resources))


def _quota_values(znode: ConfigZnode) -> dict[str, float]:
    out = {}
    for key, value in znode.config.items():
        if key in SCRAM_MECHANISMS:
            continue
        try:
            out[key] = float(value)
        except ValueError:
            log.warning("non-numeric client quota %s at /config/%s left out", key,
                        znode.entity_path)
    return out


def _quotas(snapshot: ClusterSnapshot) -> ClientQuotasImage:
    entities: dict[QuotaEntity, FrozenMap[str, float]] = {}

    kinds = {"users": "user", "clients": "client-id", "ips": "ip"}
    znodes = [*snapshot.user_configs.values(), *snapshot.client_configs.values(),
              *snapshot.user_client_configs.values(), *snapshot.ip_configs.values()]
    for znode in znodes:
        parts = znode.entity_path.split("/")
        try:
            entity = tuple(sorted((kinds[parts[i]], _entity_name(parts[i + 1]))
                                  for i in range(0, len(parts), 2)))
        except ValueError:
            log.warning("/config/%s: badly sanitized entity name; left out (Kafka's migration "
                        "fails on it too)", znode.entity_path)
            continue
        values = _quota_values(znode)
        if values:
            entities[entity] = FrozenMap(values)
    return ClientQuotasImage(FrozenMap(entities))


def _scram(user_configs: Mapping[str, ConfigZnode]) -> ScramImage:
    creds: dict[tuple[str, int], ScramCredential] = {}
    for user, znode in user_configs.items():
        for mechanism, code in SCRAM_MECHANISMS.items():
            text = znode.config.get(mechanism)
            if text is None:
                continue
            cred = parse_scram(text)
            if cred is None:
                log.warning("malformed %s credential of user %s left out", mechanism, user)
                continue
            try:
                creds[(desanitize(user), code)] = cred
            except ValueError:
                log.warning("/config/users/%s: badly sanitized user name; SCRAM left out", user)
    return ScramImage(FrozenMap(creds))


def _acls(snapshot: ClusterSnapshot) -> AclsImage:
    acls: dict[str, StandardAcl] = {}
    for resource in snapshot.acls:
        for entry in resource.acls:
            acl = StandardAcl(
                kafka_code(ACL_RESOURCE_TYPES, resource.resource_type) or 0,
                resource.name,
                kafka_code(ACL_PATTERN_TYPES, resource.pattern_type) or 0,
                entry.principal,
                entry.host,
                kafka_code(ACL_OPERATIONS, entry.operation) or 0,
                kafka_code(ACL_PERMISSIONS, entry.permission_type) or 0,
            )
            acls[f"expected-{len(acls)}"] = acl
    return AclsImage(FrozenMap(acls))


def _tokens(snapshot: ClusterSnapshot) -> DelegationTokensImage:
    tokens = {}
    for token_id, t in snapshot.delegation_tokens.items():
        try:
            owner = desanitize(t.owner)
            requester = desanitize(t.requester) if t.requester else owner
            renewers = tuple(desanitize(r) for r in t.renewers)
        except ValueError:
            log.warning("/delegation_token/tokens/%s: badly sanitized principal; left out",
                        token_id)
            continue
        tokens[token_id] = DelegationTokenData(
            token_id=token_id,
            owner=owner,
            requester=requester,
            renewers=renewers,
            issue_timestamp=t.issue_timestamp_ms,
            max_timestamp=t.max_timestamp_ms,
            expiration_timestamp=t.expiry_timestamp_ms,
        )
    return DelegationTokensImage(FrozenMap(tokens))


def expected_image(snapshot: ClusterSnapshot, *, offline: bool = False) -> MetadataImage:
    """The image a correct migration of `snapshot` replays to (features left empty).

    Args:
        snapshot: a fresh read of the ZooKeeper tree.
        offline: the log was written with every broker stopped (`--offline`): no partition
            names a leader.

    Returns:
        The expected `MetadataImage`; its ACL ids and broker incarnation ids are placeholders
        that parity does not compare.
    """
    with paused_gc():
        return _expected_image(snapshot, offline)


def _expected_image(snapshot: ClusterSnapshot, offline: bool) -> MetadataImage:
    topics = _topics(snapshot, offline)
    block = snapshot.producer_id_block
    producer_ids = (
        ProducerIdsImage(block.block_end + 1, block.broker_id, -1)
        if block is not None
        else ProducerIdsImage.EMPTY
    )
    return MetadataImage(
        features=FeaturesImage.EMPTY,
        cluster=_brokers(snapshot),
        topics=topics,
        configs=_configs(snapshot, topics),
        client_quotas=_quotas(snapshot),
        scram=_scram(snapshot.user_configs),
        acls=_acls(snapshot),
        producer_ids=producer_ids,
        delegation_tokens=_tokens(snapshot),
    )
