"""Parity: compare the image ZooKeeper implies with the image the voters' log replays to.

Both images are flattened into ROWS: per entity kind, `key → {field: plain value}` (ints,
strings, lists; no secrets — SCRAM as a one-way digest, sensitive configs as `<present>`).
`diff_rows(kind, key, zk_row, quorum_row)` turns one pair of rows into `Difference`s, and
`compare` walks both images kind by kind in a stable order (keys in natural order: `t-2` before
`t-10`). Everything is a pure function over plain data, so the Spark parity job can build the
same rows (`image_rows`), full-outer-join them by key and call `diff_rows` on each pair.

Compared per kind (fields are Kafka's camelCase record names, or config/quota keys):
    broker            endPoints, rack, brokerEpoch (not for a registration the broker made
                      itself through a KRaft controller or the stand-in: Kafka gives it the
                      offset of its record as epoch, ZooKeeper's czxid cannot match that)
    topic             topicId
    partition         replicas, isr, leader, leaderEpoch, partitionEpoch, addingReplicas,
                      removingReplicas, leaderRecoveryState        (keyed `<topic>-<partition>`)
    topic_config      each key                                      (keyed by topic name)
    broker_config     each key                                      (keyed by id, `<default>`)
    client_quota      each quota key                                (keyed `user=a,client-id=b`)
    scram             credential (digest)                           (keyed `<user>/<mechanism>`)
    acl               existence of each binding (ids are not compared)
    producer_ids      nextProducerId
    delegation_token  owner, requester, renewers, issueTimestamp, maxTimestamp,
                      expirationTimestamp
An entity on one side only is one difference with field `<exists>` (configs and quotas, which
are plain key sets, report each key instead).

Kafka's own legitimate changes since the migration (dual-write) are not differences: they are
reported with the verdict CHANGED_BY_KAFKA (`ParityReport.changed_by_kafka`), each rule exact:
    broker            in the log only, registered by the broker itself
                      (`BrokerRegistration.registered_by_broker`): a broker that moved to KRaft
                      (KRaft brokers never write /brokers/ids) or a ZooKeeper-mode broker that
                      stopped after registering with the KRaft controller. A copy zk2kraft wrote
                      of a znode that is gone is still a difference.
    producer_ids      ZooKeeper's block is `{"broker": -1, "block_start": N, "block_end":
                      N + 999}` and the log's nextProducerId is N: a KRaft controller allocated
                      a block (ProducerIdsRecord) and dual-wrote it (Kafka's
                      `ZkProducerIdsClient.writeProducerId`), so ZooKeeper leads by one block.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from verify._report import CHANGED_BY_KAFKA, Difference, JsonValue, ParityReport
from verify.image import MetadataImage, PartitionImage, TopicImage
from writers import (
    ACL_OPERATIONS,
    ACL_PATTERN_TYPES,
    ACL_PERMISSIONS,
    ACL_RESOURCE_TYPES,
    SCRAM_MECHANISMS,
    SECURITY_PROTOCOLS,
    is_sensitive_config,
    kafka_name,
)

__all__ = [
    "EXISTS",
    "KINDS",
    "PRESENT",
    "Row",
    "compare",
    "diff_rows",
    "image_rows",
    "natural_key",
    "parity_report",
]

Row = Mapping[str, JsonValue]

EXISTS = "<exists>"
PRESENT = "<present>"

KINDS = (
    "broker",
    "topic",
    "partition",
    "topic_config",
    "broker_config",
    "client_quota",
    "scram",
    "acl",
    "producer_ids",
    "delegation_token",
)
# a broker row's marker: registered by the broker itself (`BrokerRegistration.registered_by_broker`)
_BY_BROKER = "registeredByBroker"
# a producer_ids row's marker: the block's broker is -1, as a KRaft controller dual-writes it
_BY_KRAFT = "writtenByKraftController"
# ProducerIdsBlock.PRODUCER_ID_BLOCK_SIZE: the block a dual-write puts in ZooKeeper
PRODUCER_ID_BLOCK_SIZE = 1000
_KAFKA_BROKER = ("registered by the broker itself through KRaft; ZooKeeper no longer lists it "
                 "(a broker moved to KRaft, or a ZooKeeper-mode broker that stopped)")
_KAFKA_BLOCK = ("a KRaft controller allocated a producer-id block in dual-write: ZooKeeper "
                "holds {broker: -1, block_start: the log's nextProducerId}, one block ahead")
_PER_FIELD_KINDS = frozenset({"topic_config", "broker_config", "client_quota"})

_DIGITS = re.compile(r"(\d+)")


def _name(table: Mapping[str, int], code: int) -> str | int:
    """Kafka's enum name of a code, or the code itself when it is not one of Kafka's."""
    name = kafka_name(table, code)
    return code if name is None else name


def natural_key(key: str) -> tuple[tuple[int, int, str], ...]:
    """Sort key that orders digit runs by value (`t-2` < `t-10`), deterministic for any str."""
    return tuple(
        (0, int(part), part) if part.isdigit() else (1, 0, part)
        for part in _DIGITS.split(key)
        if part
    )


# -------------------------------------------------------------------------------- rows


def _partition_row(p: PartitionImage) -> dict[str, JsonValue]:
    return {
        "replicas": list(p.replicas),
        "isr": list(p.isr),
        "leader": p.leader,
        "leaderEpoch": p.leader_epoch,
        "partitionEpoch": p.partition_epoch,
        "addingReplicas": list(p.adding_replicas),
        "removingReplicas": list(p.removing_replicas),
        "leaderRecoveryState": p.leader_recovery_state,
    }


def _partition_fields(p: PartitionImage) -> tuple[Any, ...]:
    return (p.replicas, p.isr, p.leader, p.leader_epoch, p.partition_epoch, p.adding_replicas,
            p.removing_replicas, p.leader_recovery_state)


def _jlist(values: list[str]) -> list[JsonValue]:
    return list(values)


def _config_row(conf: Mapping[str, str]) -> dict[str, JsonValue]:
    return {k: PRESENT if is_sensitive_config(k, v) else v for k, v in conf.items()}


def _quota_key(entity: tuple[tuple[str, str | None], ...]) -> str:
    order = {"user": 0, "client-id": 1, "ip": 2}
    parts = sorted(entity, key=lambda e: (order.get(e[0], 9), e[0]))
    return ",".join(f"{t}={'<default>' if n is None else n}" for t, n in parts)


def _broker_rows(image: MetadataImage) -> dict[str, Row]:
    rows: dict[str, Row] = {}
    for bid, b in image.cluster.brokers.items():
        row: dict[str, JsonValue] = {
            "endPoints": _jlist(sorted(
                f"{e.name}://{e.host}:{e.port}/"
                f"{_name(SECURITY_PROTOCOLS, e.security_protocol)}"
                for e in b.endpoints
            )),
            "rack": b.rack,
            "brokerEpoch": b.epoch,
        }
        if b.registered_by_broker:
            row[_BY_BROKER] = True
        rows[str(bid)] = row
    return rows


def _topic_rows(image: MetadataImage) -> dict[str, Row]:
    return {name: {"topicId": t.topic_id} for name, t in image.topics.by_name.items()}


def _partition_rows(image: MetadataImage) -> dict[str, Row]:
    rows: dict[str, Row] = {}
    for name, t in image.topics.by_name.items():
        for pid, p in t.partitions.items():
            rows[f"{name}-{pid}"] = _partition_row(p)
    return rows


def _config_rows(rtype: int) -> Callable[[MetadataImage], dict[str, Row]]:
    def rows_of(image: MetadataImage) -> dict[str, Row]:
        rows: dict[str, Row] = {}
        for (res_type, name), conf in image.configs.resources.items():
            if res_type == rtype:
                key = "<default>" if rtype == 4 and name == "" else name
                rows[key] = _config_row(conf)
        return rows
    return rows_of


def _client_quota_rows(image: MetadataImage) -> dict[str, Row]:
    return {_quota_key(entity): dict(quotas)
            for entity, quotas in image.client_quotas.entities.items()}


def _scram_rows(image: MetadataImage) -> dict[str, Row]:
    return {f"{user}/{_name(SCRAM_MECHANISMS, mech)}": {"credential": "sha256:" + cred.digest()}
            for (user, mech), cred in image.scram.credentials.items()}


def _acl_rows(image: MetadataImage) -> dict[str, Row]:
    rows: dict[str, Row] = {}
    for a in image.acls.acls.values():
        key = (
            f"{_name(ACL_RESOURCE_TYPES, a.resource_type)}:"
            f"{_name(ACL_PATTERN_TYPES, a.pattern_type)}:{a.resource_name} "
            f"{a.principal} host={a.host} "
            f"{_name(ACL_OPERATIONS, a.operation)} "
            f"{_name(ACL_PERMISSIONS, a.permission_type)}"
        )
        rows[key] = {}
    return rows


def _producer_ids_rows(image: MetadataImage) -> dict[str, Row]:
    rows: dict[str, Row] = {}
    if image.producer_ids.next_producer_id >= 0:
        ids: dict[str, JsonValue] = {"nextProducerId": image.producer_ids.next_producer_id}
        if image.producer_ids.broker_id == -1:
            ids[_BY_KRAFT] = True
        rows["cluster"] = ids
    return rows


def _token_rows(image: MetadataImage) -> dict[str, Row]:
    return {tid: {
        "owner": tok.owner,
        "requester": tok.requester,
        "renewers": _jlist(sorted(tok.renewers)),
        "issueTimestamp": tok.issue_timestamp,
        "maxTimestamp": tok.max_timestamp,
        "expirationTimestamp": tok.expiration_timestamp,
    } for tid, tok in image.delegation_tokens.tokens.items()}


_ROWS: dict[str, Callable[[MetadataImage], dict[str, Row]]] = {
    "broker": _broker_rows,
    "topic": _topic_rows,
    "partition": _partition_rows,
    "topic_config": _config_rows(2),
    "broker_config": _config_rows(4),
    "client_quota": _client_quota_rows,
    "scram": _scram_rows,
    "acl": _acl_rows,
    "producer_ids": _producer_ids_rows,
    "delegation_token": _token_rows,
}
"""Each parity kind's rows: the entity kinds' registry entries (`migrate.translate.kinds`)
name the parity kinds they own."""


def image_rows(image: MetadataImage, kind: str) -> dict[str, Row]:
    """One kind of entity of `image` as rows `key → {field: value}` (see the module doc).

    Raises:
        ValueError: `kind` is not one of `KINDS`.
    """
    rows_of = _ROWS.get(kind)
    if rows_of is None:
        raise ValueError(f"unknown entity kind {kind!r}; expected one of {', '.join(KINDS)}")
    return rows_of(image)


# ------------------------------------------------------------------------------- diffing


def _is_secret(kind: str, field: str) -> bool:
    if kind == "scram":
        return True
    return kind in ("topic_config", "broker_config") and is_sensitive_config(field)


def diff_rows(kind: str, key: str, zookeeper: Row | None, quorum: Row | None) -> list[Difference]:
    """The differences between one entity's two rows (either may be None: absent there).

    Returns:
        `<exists>` for an entity on one side only (except configs and quotas, which report
        each key), else one difference per differing field, fields sorted.
    """
    if zookeeper is None and quorum is None:
        return []
    if kind not in _PER_FIELD_KINDS and (zookeeper is None or quorum is None):
        if kind == "broker" and quorum is not None and quorum.get(_BY_BROKER):
            return [Difference(kind, key, EXISTS, False, True, verdict=CHANGED_BY_KAFKA,
                               reason=_KAFKA_BROKER)]
        return [Difference(kind, key, EXISTS, zookeeper is not None, quorum is not None)]
    zk = zookeeper or {}
    q = quorum or {}
    if kind == "producer_ids":
        # the marker says who wrote the block; only ZooKeeper's is Kafka's dual-write
        by_kraft = zk.get(_BY_KRAFT) is True
        zk = {f: v for f, v in zk.items() if f != _BY_KRAFT}
        q = {f: v for f, v in q.items() if f != _BY_KRAFT}
        zn, qn = zk.get("nextProducerId"), q.get("nextProducerId")
        if (by_kraft and isinstance(zn, int) and isinstance(qn, int)
                and zn == qn + PRODUCER_ID_BLOCK_SIZE):
            return [Difference(kind, key, "nextProducerId", zn, qn, verdict=CHANGED_BY_KAFKA,
                               reason=_KAFKA_BLOCK)]
    if kind == "broker":
        # The marker tells who wrote the quorum's registration; the expected image's
        # registrations carry a placeholder incarnation, so its marker means nothing.
        zk = {f: v for f, v in zk.items() if f != _BY_BROKER}
        if q.get(_BY_BROKER):  # a broker's own epoch is an offset, never ZooKeeper's czxid
            zk.pop("brokerEpoch", None)
            q = {f: v for f, v in q.items() if f not in ("brokerEpoch", _BY_BROKER)}
    out = []
    for field in sorted(set(zk) | set(q)):
        a, b = zk.get(field), q.get(field)
        if a != b or (field in zk) != (field in q):
            out.append(Difference(kind, key, field, a, b, secret=_is_secret(kind, field)))
    return out


def _diff_kind(kind: str, zk: Mapping[str, Row], q: Mapping[str, Row]) -> Iterator[Difference]:
    for key in sorted(set(zk) | set(q), key=natural_key):
        yield from diff_rows(kind, key, zk.get(key), q.get(key))


def _diff_partitions(
    zk: Mapping[str, TopicImage], q: Mapping[str, TopicImage]
) -> tuple[list[Difference], int]:
    """Partitions topic by topic, building rows only where the fields differ (1M partitions)."""
    out: list[Difference] = []
    checked = 0
    for name in sorted(set(zk) | set(q), key=natural_key):
        zp = zk[name].partitions if name in zk else {}
        qp = q[name].partitions if name in q else {}
        ids = sorted(set(zp) | set(qp))
        checked += len(ids)
        for pid in ids:
            a, b = zp.get(pid), qp.get(pid)
            if a is not None and b is not None and _partition_fields(a) == _partition_fields(b):
                continue
            out += diff_rows(
                "partition",
                f"{name}-{pid}",
                None if a is None else _partition_row(a),
                None if b is None else _partition_row(b),
            )
    # Order by the whole key (as every other kind), so a row-wise job (Spark) sorting the
    # same way agrees even for names like `a` / `a-1`; the sort is stable, fields stay sorted.
    out.sort(key=lambda d: natural_key(d.key))
    return out, checked


def _compare(zk: MetadataImage, q: MetadataImage) -> tuple[list[Difference], dict[str, int]]:
    differences: list[Difference] = []
    checked: dict[str, int] = {}
    for kind in KINDS:
        if kind == "partition":
            diffs, checked[kind] = _diff_partitions(zk.topics.by_name, q.topics.by_name)
            differences += diffs
            continue
        zrows, qrows = image_rows(zk, kind), image_rows(q, kind)
        checked[kind] = len(set(zrows) | set(qrows))
        differences += _diff_kind(kind, zrows, qrows)
    return differences, checked


def compare(zk_image: MetadataImage, quorum_image: MetadataImage) -> list[Difference]:
    """Every difference between the image ZooKeeper implies and the quorum's, stable order.

    Args:
        zk_image: the expected image (`expected_image(snapshot)`).
        quorum_image: the image replayed from a voter's log.

    Returns:
        Differences ordered by kind (`KINDS` order), key (natural order), then field.
    """
    return _compare(zk_image, quorum_image)[0]


def parity_report(
    zk_image: MetadataImage,
    quorum_image: MetadataImage,
    *,
    extra: tuple[Difference, ...] = (),
    provenance: Mapping[str, JsonValue] | None = None,
) -> ParityReport:
    """`compare` plus the per-kind counts of entities checked, as a `ParityReport`.

    Args:
        extra: differences found outside the images (voters disagreeing, an open
            transaction, a voter's files), listed first; each goes to its verdict's class.
        provenance: where the quorum image came from, for the report.
    """
    differences, checked = _compare(zk_image, quorum_image)
    return ParityReport.of((*extra, *differences), checked, provenance)
