"""Entities: which Kafka entity a znode belongs to, and re-reading a few entities live.

The migration maps ZooKeeper to KRaft one *entity* at a time (a topic with its partitions, a
config entity, a quota entity with a user's SCRAM, an ACL resource, a broker, the producer-id
block, a token). The online mirror learns of a change as a watch notification on one znode;
`entity_key_for_path` names the entity that znode belongs to, `changed_entities` turns a batch of
notifications into entity keys (re-listing a notified list znode to find what was created in it),
and `read_entities` re-reads those entities through the reader's pipeline, re-arming a watch on
every znode it reads (design I3: watches fire once, so every re-read must arm them again).

Keys name entities as ZooKeeper stores them (sanitized names, `<default>`): desanitizing and the
rest of the mapping belong to translation (`migrate.translate.entities`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from zkreader import _paths
from zkreader._model import (
    AclResource,
    Broker,
    ClusterSnapshot,
    ConfigZnode,
    DelegationToken,
    PartitionState,
    ProducerIdBlock,
    Topic,
)
from zkreader._pipeline import DEFAULT_BATCH, DEFAULT_WINDOW, ReadPipeline, ReadRequest
from zkreader._reader import ReadHook, _assemble, _Walk
from zkreader._session import ZkSession
from zkreader._znodes import (
    ACL_PATTERNS,
    AclZnode,
    BrokerZnode,
    ClusterIdZnodeKind,
    ConfigZnodeKind,
    PartitionStateZnode,
    ProducerIdBlockZnode,
    TokenZnode,
    TopicZnode,
)

__all__ = [
    "ENTITY_KINDS",
    "ZK_KINDS",
    "EntityKey",
    "ZkKind",
    "changed_entities",
    "entity_key_for_path",
    "read_entities",
]

BROKER = "broker"
TOPIC = "topic"
PARTITION = "partition"
TOPIC_CONFIG = "topic_config"
BROKER_CONFIG = "broker_config"
CLIENT_QUOTA = "client_quota"
PRODUCER_IDS = "producer_ids"
ACL = "acl"
DELEGATION_TOKEN = "delegation_token"




@dataclass(frozen=True, slots=True)
class EntityKey:
    """One Kafka entity in ZooKeeper.

    Attributes:
        kind: one of `ENTITY_KINDS`:
            `broker` (name = broker id as text): `/brokers/ids/<id>`;
            `topic` (name = topic): the topic znode, all its partition states, its
                `/config/topics/<t>` and whether `/admin/delete_topics/<t>` exists;
            `partition` (name = topic, `partition` = id): one partition state znode (a leader
                or ISR change re-reads one znode, not the whole topic);
            `topic_config` (name = topic): `/config/topics/<t>` alone;
            `broker_config` (name = `<default>` or broker id): `/config/brokers/<e>`;
            `client_quota` (name = path below `/config`: `users/<u>`, `clients/<c>`,
                `users/<u>/clients/<c>`, `ips/<ip>`, sanitized as stored): its quotas, and for
                `users/<u>` also that user's SCRAM credentials;
            `producer_ids` (name ""): `/latest_producer_id_block`;
            `acl` (name = `<PATTERN>/<ResourceType>/<name>`, e.g. `LITERAL/Topic/orders`):
                one ACL resource znode;
            `delegation_token` (name = token id).
        name: as above.
        partition: the partition id of a `partition` key, -1 otherwise.
    """

    kind: str
    name: str
    partition: int = -1

    @classmethod
    def broker(cls, broker_id: int) -> EntityKey:
        """The key of broker `broker_id`."""
        return cls(BROKER, str(broker_id))

    @classmethod
    def topic(cls, name: str) -> EntityKey:
        """The key of topic `name` (with its partitions and configs)."""
        return cls(TOPIC, name)

    @classmethod
    def partition_of(cls, topic: str, partition: int) -> EntityKey:
        """The key of one partition's state."""
        return cls(PARTITION, topic, partition)

    @classmethod
    def acl(cls, pattern_type: str, resource_type: str, name: str) -> EntityKey:
        """The key of one ACL resource (`pattern_type` LITERAL or PREFIXED)."""
        return cls(ACL, f"{pattern_type}/{resource_type}/{name}")

    @property
    def path(self) -> str:
        """The entity's main znode (chroot-relative)."""
        zk = ZK_KINDS.get(self.kind)
        if zk is None:
            raise ValueError(f"unknown entity kind {self.kind!r}")
        return zk.path(self)

    def acl_znode(self) -> AclZnode:
        """The decoder of an `acl` key's znode."""
        pattern, resource_type, name = self.name.split("/", 2)
        return AclZnode(pattern, resource_type, name)


# ------------------------------------------------------------------ the kinds' ZooKeeper side


@dataclass(frozen=True, slots=True)
class ZkKind:
    """What ZooKeeper holds of one entity kind: the ZooKeeper side of its registry entry
    (`migrate.translate.kinds`, which holds the rest: translation, delta, expected image).

    Attributes:
        name: the kind (`EntityKey.kind`).
        roots: the first component of every znode path of the kind (`brokers` for
            `/brokers/ids/<id>`): a notified path is offered only to the kinds of its root.
        key: the key of a notified znode's path components (`["brokers", "ids", "3"]`), or None
            when the path is none of the kind's entities.
        path: an entity's main znode (`EntityKey.path`).
        reads: the znode decoders `read_entities` reads for one key (the topic's partition
            states are read in a second round, once its assignment is known).
        decoders: the decoder classes of the kind's znodes. A znode format that differs by
            Kafka version is told apart inside its decoder, which lists the JSON versions it
            takes in `VERSIONS` (`TopicZnode`: 1-3, `BrokerZnode`: 1-5, `TokenZnode`: 1-3).
        lists: what a notified path's components are to the kind: `ENTITY_LIST` (its children
            are the kind's entity znodes: `/brokers/ids`), `LIST_OF_LISTS` (its children are
            such lists: `/kafka-acl`), or "" (neither). A path is a list of one kind at most.
        sublists: the lists to read below a listed path, given its children (a new user's
            `/config/users/<u>/clients`, the resource types under `/kafka-acl`).
    """

    name: str
    roots: tuple[str, ...]
    key: Callable[[list[str]], EntityKey | None]
    path: Callable[[EntityKey], str]
    reads: Callable[[EntityKey], list[Any]]
    decoders: tuple[type, ...]
    lists: Callable[[list[str]], str] = lambda parts: ""
    sublists: Callable[[str, Sequence[str]], list[str]] = lambda path, children: []


ENTITY_LIST = "entities"
LIST_OF_LISTS = "lists"


def _list_at(*lists: list[str]) -> Callable[[list[str]], str]:
    """A kind whose entities are listed under exactly these paths (as components)."""
    return lambda parts: ENTITY_LIST if parts in lists else ""


def _client_quota_lists(parts: list[str]) -> str:
    n = len(parts)
    if parts[0] == "config" and ((n == 2 and parts[1] in ("users", "clients", "ips")) or (
            n == 4 and parts[1] == "users" and parts[3] == "clients")):
        return ENTITY_LIST
    return ""


def _client_quota_sublists(path: str, children: Sequence[str]) -> list[str]:
    return [_paths.user_clients(c) for c in children] \
        if path == _paths.config_entities("users") else []


def _acl_lists(parts: list[str]) -> str:
    n = len(parts)
    if parts[0] == "kafka-acl":
        return LIST_OF_LISTS if n == 1 else ENTITY_LIST if n == 2 else ""
    if parts[0] == "kafka-acl-extended":
        return LIST_OF_LISTS if n in (1, 2) else ENTITY_LIST if n == 3 else ""
    return ""


def _acl_sublists(path: str, children: Sequence[str]) -> list[str]:
    if path == _paths.ACL_LITERAL_ROOT or (
            path.startswith(_paths.ACL_EXTENDED_ROOT + "/") and path.count("/") == 2):
        return [_paths.child(path, c) for c in children if c in _paths.ACL_RESOURCE_TYPES]
    if path == _paths.ACL_EXTENDED_ROOT:
        return [_paths.child(path, c) for c in children if c in ACL_PATTERNS]
    return []


def _broker_key(parts: list[str]) -> EntityKey | None:
    if len(parts) == 3 and parts[:2] == ["brokers", "ids"] and parts[2].isascii() \
            and parts[2].isdigit():
        return EntityKey(BROKER, parts[2])
    return None


def _topic_key(parts: list[str]) -> EntityKey | None:
    if len(parts) == 3 and parts[:2] in (["brokers", "topics"], ["admin", "delete_topics"]):
        return EntityKey(TOPIC, parts[2])
    return None


def _partition_key(parts: list[str]) -> EntityKey | None:
    if len(parts) == 6 and parts[:2] == ["brokers", "topics"] and parts[3] == "partitions" \
            and parts[5] == "state" and parts[4].isascii() and parts[4].isdigit():
        return EntityKey(PARTITION, parts[2], int(parts[4]))
    return None


def _config_key(kind: str, entity_type: str) -> Callable[[list[str]], EntityKey | None]:
    def key(parts: list[str]) -> EntityKey | None:
        if len(parts) == 3 and parts[:2] == ["config", entity_type]:
            return EntityKey(kind, parts[2])
        return None
    return key


def _client_quota_key(parts: list[str]) -> EntityKey | None:
    n = len(parts)
    if parts[0] == "config" and ((n == 3 and parts[1] in ("users", "clients", "ips")) or (
            n == 5 and parts[1] == "users" and parts[3] == "clients")):
        return EntityKey(CLIENT_QUOTA, "/".join(parts[1:]))
    return None


def _producer_ids_key(parts: list[str]) -> EntityKey | None:
    if "/" + "/".join(parts) == _paths.PRODUCER_ID_BLOCK:
        return EntityKey(PRODUCER_IDS, "")
    return None


def _acl_key(parts: list[str]) -> EntityKey | None:
    n = len(parts)
    if n == 3 and parts[0] == "kafka-acl" and parts[1] in _paths.ACL_RESOURCE_TYPES:
        return EntityKey.acl("LITERAL", parts[1], parts[2])
    if n == 4 and parts[0] == "kafka-acl-extended" and parts[1] in ACL_PATTERNS \
            and parts[2] in _paths.ACL_RESOURCE_TYPES:
        return EntityKey.acl(ACL_PATTERNS[parts[1]], parts[2], parts[3])
    return None


def _token_key(parts: list[str]) -> EntityKey | None:
    if len(parts) == 3 and parts[:2] == ["delegation_token", "tokens"]:
        return EntityKey(DELEGATION_TOKEN, parts[2])
    return None


_PID_ROOT = _paths.PRODUCER_ID_BLOCK.split("/")[1]

ZK_KINDS: dict[str, ZkKind] = {zk.name: zk for zk in (
    ZkKind(BROKER, ("brokers",), _broker_key,
           lambda k: _paths.broker(int(k.name)),
           lambda k: [BrokerZnode(int(k.name))], (BrokerZnode,),
           lists=_list_at(["brokers", "ids"])),
    # a topic is its znode, its partitions' states, its config and its pending deletion
    ZkKind(TOPIC, ("brokers", "admin"), _topic_key,
           lambda k: _paths.topic(k.name),
           lambda k: [TopicZnode(k.name), ConfigZnodeKind(f"topics/{k.name}")],
           (TopicZnode, PartitionStateZnode, ConfigZnodeKind),
           lists=_list_at(["brokers", "topics"], ["admin", "delete_topics"])),
    ZkKind(PARTITION, ("brokers",), _partition_key,
           lambda k: _paths.partition_state(k.name, k.partition),
           lambda k: [PartitionStateZnode(k.name, k.partition)], (PartitionStateZnode,)),
    ZkKind(TOPIC_CONFIG, ("config",), _config_key(TOPIC_CONFIG, "topics"),
           lambda k: _paths.config(f"topics/{k.name}"),
           lambda k: [ConfigZnodeKind(f"topics/{k.name}")], (ConfigZnodeKind,),
           lists=_list_at(["config", "topics"])),
    ZkKind(BROKER_CONFIG, ("config",), _config_key(BROKER_CONFIG, "brokers"),
           lambda k: _paths.config(f"brokers/{k.name}"),
           lambda k: [ConfigZnodeKind(f"brokers/{k.name}")], (ConfigZnodeKind,),
           lists=_list_at(["config", "brokers"])),
    # `users/<u>` holds that user's quotas and SCRAM credentials in one znode
    ZkKind(CLIENT_QUOTA, ("config",), _client_quota_key,
           lambda k: _paths.config(k.name),
           lambda k: [ConfigZnodeKind(k.name)], (ConfigZnodeKind,),
           lists=_client_quota_lists, sublists=_client_quota_sublists),
    ZkKind(PRODUCER_IDS, (_PID_ROOT,), _producer_ids_key,
           lambda k: _paths.PRODUCER_ID_BLOCK,
           lambda k: [ProducerIdBlockZnode()], (ProducerIdBlockZnode,)),
    ZkKind(ACL, ("kafka-acl", "kafka-acl-extended"), _acl_key,
           lambda k: k.acl_znode().path,
           lambda k: [k.acl_znode()], (AclZnode,),
           lists=_acl_lists, sublists=_acl_sublists),
    ZkKind(DELEGATION_TOKEN, ("delegation_token",), _token_key,
           lambda k: _paths.token(k.name),
           lambda k: [TokenZnode(k.name)], (TokenZnode,),
           lists=_list_at(["delegation_token", "tokens"])),
)}
"""The ZooKeeper side of every entity kind, in log order."""

ENTITY_KINDS: tuple[str, ...] = tuple(ZK_KINDS)
"""Every entity kind, in log order (Kafka 3.9's migration order, brokers first for I2)."""

_BY_ROOT: dict[str, tuple[ZkKind, ...]] = {
    root: tuple(zk for zk in ZK_KINDS.values() if root in zk.roots)
    for zk in ZK_KINDS.values() for root in zk.roots}


def _key(path: str) -> EntityKey | None:
    parts = path.split("/")[1:]
    for zk in _BY_ROOT.get(parts[0], ()):
        key = zk.key(parts)
        if key is not None:
            return key
    return None


def entity_key_for_path(path: str) -> EntityKey | None:
    """The entity a notified znode belongs to, or None when it belongs to none.

    Lists (`/brokers/topics`, `/config/users`, ...) belong to no entity: a child notification on
    one means an entity was created or removed there (see `changed_entities`). So do znodes that
    hold no migrated metadata (`/controller`, `/log_dir_event_notification/...`, `/feature`).

    Args:
        path: a chroot-relative znode path, as `ChangeEvent.path` gives it.
    """
    return _key(path) if path.startswith("/") else None


def _list_kind(path: str) -> tuple[ZkKind, str] | None:
    """The kind a notified path lists, and how (`ZkKind.lists`), or None for no list."""
    parts = path.split("/")[1:]
    for zk in _BY_ROOT.get(parts[0], ()):
        role = zk.lists(parts)
        if role:
            return zk, role
    return None


def _list_children_keys(path: str, children: Sequence[str],
                        new_only: Callable[[list[str]], list[str]] | None = None,
                        ) -> tuple[list[EntityKey], list[str]]:
    """Keys of a list's children, and deeper lists to read (a new user's clients, ACL types).

    `new_only` filters the children's paths before any key is built (a child's path is its
    key's path): a re-listed `/brokers/topics` of thousands of topics then costs one set lookup
    per topic, not a key each, inside the cutover's window. Deeper lists come from every child.
    """
    found = _list_kind(path)
    if found is None:
        return [], []
    zk, role = found
    keys: list[EntityKey] = []
    if role == ENTITY_LIST:
        paths = [_paths.child(path, c) for c in children]
        for child in paths if new_only is None else new_only(paths):
            key = _key(child)
            if key is not None:
                keys.append(key)
    return keys, zk.sublists(path, children)


def _is_list(path: str) -> bool:
    return _list_kind(path) is not None


def changed_entities(
    session: ZkSession,
    paths: Iterable[str],
    *,
    watch: bool = True,
    only_unwatched: bool = True,
) -> list[EntityKey]:
    """The entities a batch of notified paths stands for, in first-notified order.

    An entity znode maps to its key. A notified list (`/brokers/topics`, `/config/users`,
    `/kafka-acl/Topic`, ...) is listed again (re-arming its child watch with `watch`), and its
    children map to keys; with `only_unwatched` only children whose own znode has no armed watch
    in the session's change feed are kept (the new ones: an existing child reports its own
    changes and deletion through its data watch), so a topic creation costs one list read, not a
    re-read of every topic. Children of `/admin/delete_topics` are always kept (nothing watches
    them individually).

    Args:
        session: the live session whose change feed armed the watches.
        paths: notified chroot-relative paths (`ChangeEvent.path`), oldest first.
        watch: re-arm child watches on the lists read. The last read of a run (the cutover's
            drain) passes False: nothing is mirrored after it, and each read round would wait
            for one more round trip (the SetWatches); the feed still tells new children apart.
        only_unwatched: see above.

    Returns:
        Distinct keys, in the order their first notification came.

    Raises:
        ZkUnreachableError: the session was lost while listing.
    """
    feed = session.changes
    ordered: dict[EntityKey, None] = {}
    pending_lists: list[str] = []
    for path in paths:
        key = entity_key_for_path(path)
        if key is not None:
            ordered.setdefault(key, None)
        elif _is_list(path):
            pending_lists.append(path)
    pipeline = ReadPipeline(session, feed=feed if watch else None, window=DEFAULT_WINDOW,
                            batch=DEFAULT_BATCH)
    seen_lists: set[str] = set()
    while pending_lists:
        batch = [p for p in dict.fromkeys(pending_lists) if p not in seen_lists]
        pending_lists = []
        seen_lists.update(batch)
        for result in pipeline.read([ReadRequest(p, children=True) for p in batch]):
            if result.children is None:
                continue
            keep_all = result.path == _paths.DELETE_TOPICS
            keys, lists = _list_children_keys(
                result.path, result.children,
                None if keep_all or not only_unwatched else feed.unarmed)
            for key in keys:
                ordered.setdefault(key, None)
            pending_lists += lists
    return list(ordered)


def read_entities(
    session: ZkSession,
    keys: Iterable[EntityKey],
    *,
    watch: bool = True,
    window: int = DEFAULT_WINDOW,
    batch: int = DEFAULT_BATCH,
    multi_read: bool = True,
    pause: ReadHook | None = None,
) -> ClusterSnapshot:
    """Re-read some entities into a partial `ClusterSnapshot`, re-arming their watches.

    The snapshot holds exactly what ZooKeeper now has for those entities: an entity absent from
    it was not found (deleted), which is how `migrate.translate.delta.delta_records` knows to
    write its
    removal. `cluster_id` is read too (broker registrations derive their incarnation id from
    it); nothing else outside the keys is. A `topic` key reads the topic znode, its config, the
    pending-deletion list and then every partition state of the topic; a `partition` key reads
    its state znode only.

    Args:
        session: an open session; with `watch`, its change feed gets the re-armed watches.
        keys: the entities to read (`changed_entities`, or keys built with `EntityKey`).
        watch: arm a watch on every znode read (design I3).
        window / batch / multi_read / pause: as `read_cluster`.

    Returns:
        The partial snapshot, shaped as `read_cluster`'s.

    Raises:
        ZnodeFormatError: a znode is malformed (names the path).
        ZkUnreachableError: the session was lost or a read refused.
    """
    feed = session.changes if watch else None
    pipeline = ReadPipeline(session, window=window, batch=batch, feed=feed,
                            multi_read=multi_read)
    walk = _Walk(pipeline, None, pause)
    kinds: list[Any] = [ClusterIdZnodeKind()]
    lists: list[str] = []
    wanted_topics: list[str] = []
    single_states: list[PartitionStateZnode] = []
    for key in dict.fromkeys(keys):
        zk = ZK_KINDS.get(key.kind)
        if zk is None:
            raise ValueError(f"unknown entity kind {key.kind!r}")
        for znode in zk.reads(key):
            # a lone partition state is read after the other znodes, as it always was
            (single_states if isinstance(znode, PartitionStateZnode) else kinds).append(znode)
        if key.kind == TOPIC:
            wanted_topics.append(key.name)
    if wanted_topics:
        lists.append(_paths.DELETE_TOPICS)
    got1, children = walk.round(kinds + single_states, lists)
    cluster_id = got1[0]
    found = [x for x in got1[1:] if x is not None]
    topics = {t.name: t for t in found if isinstance(t, Topic)}
    states: dict[tuple[str, int], PartitionState] = {
        (s.topic, s.partition): s for s in found if isinstance(s, PartitionState)}
    state_kinds = [PartitionStateZnode(name, p) for name in wanted_topics if name in topics
                   for p in sorted(topics[name].assignment)]
    if state_kinds:
        got2, _ = walk.round(state_kinds, [])
        for s in got2:
            if s is not None:
                states[(s.topic, s.partition)] = s
    pid_blocks = [b for b in found if isinstance(b, ProducerIdBlock)]
    return _assemble(
        session.chroot, cluster_id=cluster_id, controller=None, controller_epoch=None,
        feature=None, brokers={b.broker_id: b for b in found if isinstance(b, Broker)},
        topics=topics, states=states,
        pending=[n for n in children.get(_paths.DELETE_TOPICS, ()) if n in wanted_topics],
        configs=[c for c in found if isinstance(c, ConfigZnode)],
        acls=[a for a in found if isinstance(a, AclResource)],
        tokens={t.token_id: t for t in found if isinstance(t, DelegationToken)},
        pid_block=pid_blocks[0] if pid_blocks else None, events=[], migration=None,
        last_zxid=walk.last_zxid,
    )
