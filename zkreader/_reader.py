"""`read_cluster`: the whole Kafka tree of one chroot, read in a few pipelined rounds.

The tree is walked breadth-first in rounds (roots and lists, then entities, then partition
states and nested entities, then prefixed ACLs); every round goes through one `ReadPipeline`, so
the number of reads in flight stays bounded while each round is a single pipelined stream. Every
read arms a watch on the session's change feed (design I3) unless `watch=False`.

A znode that disappears between being listed and being read is skipped (its parent's child watch
reports the change); a malformed znode aborts the read with `ZnodeFormatError` naming it (I8).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, cast

from zkreader import _paths
from zkreader._gc import paused_gc
from zkreader._model import (
    AclResource,
    Broker,
    ClusterSnapshot,
    ConfigZnode,
    DelegationToken,
    LogDirEvent,
    PartitionState,
    Topic,
)
from zkreader._pipeline import (
    DEFAULT_BATCH,
    DEFAULT_WINDOW,
    GET_CHILDREN,
    GET_DATA,
    ReadPipeline,
)
from zkreader._session import ZkSession
from zkreader._znode_fields import number_named_twice
from zkreader._znodes import (
    ACL_PATTERNS,
    INT32_MAX,
    AclZnode,
    BrokerZnode,
    ClusterIdZnodeKind,
    ConfigZnodeKind,
    ControllerEpochZnodeKind,
    ControllerZnodeKind,
    FeatureZnodeKind,
    LogDirEventZnode,
    MigrationZnodeKind,
    PartitionStateZnode,
    ProducerIdBlockZnode,
    TokenZnode,
    TopicZnode,
    topic_name_problem,
)
from zkreader.errors import ZnodeFormatError

if TYPE_CHECKING:
    from kazoo.protocol.states import ZnodeStat

__all__ = ["ProgressCallback", "ReadHook", "ReadStats", "read_cluster"]

log = logging.getLogger(__name__)

ProgressCallback = Callable[[int, int], None]
"""`progress(done, total)`: reads finished and reads known so far (the total grows per round)."""



class ReadHook(Protocol):
    """A test-only hook told of every read result (`writers.ReadPause`, given by `migrate`).

    zkreader imports no sibling, so the hook comes in as a parameter; None (the default) costs
    one check per reply.

    Attributes:
        done: True once the hook has acted; it is not called again.
    """

    done: bool

    def check(self, reads: int, client_id: tuple[int, bytes] | None) -> None:
        """Called after each read result with the reads finished so far and kazoo's client id."""


_LOG_DIR_EVENT_PREFIX = "log_dir_event_"
_PROGRESS_EVERY = 1000


class ReadStats:
    """Figures of the last `read_cluster` call (for benchmarks and `-v` logging).

    Attributes:
        reads: znode reads (data and children) issued.
        rounds: pipelined rounds.
        elapsed_s: wall time of the read.
        max_in_flight: the most reads that were in flight at once.
    """

    __slots__ = ("elapsed_s", "max_in_flight", "reads", "rounds")

    def __init__(self) -> None:
        self.reads = 0
        self.rounds = 0
        self.elapsed_s = 0.0
        self.max_in_flight = 0


class _Walk:
    """One read of the tree: runs the rounds and accumulates the snapshot's parts."""

    def __init__(self, pipeline: ReadPipeline, progress: ProgressCallback | None,
                 pause: ReadHook | None) -> None:
        self.pipeline = pipeline
        self.progress = progress
        self.done = 0
        self.total = 0
        self.rounds = 0
        self.last_zxid = 0
        self.pause = pause  # test-only (writers.ReadPause); None in use

    def round(self, kinds: list[Any], lists: list[str]
              ) -> tuple[list[Any], dict[str, tuple[str, ...]]]:
        """Read the znodes of `kinds` and the children of `lists`, pipelined, in one stream.

        Returns:
            The decoded models aligned with `kinds` (None where the znode does not exist), and
            the children of each path in `lists` (absent when that znode does not exist).
        """
        ops = [(GET_DATA, k.path) for k in kinds]
        ops += [(GET_CHILDREN, p) for p in lists]
        self.total += len(ops)
        self.rounds += 1
        decoded: list[Any] = []
        append = decoded.append
        children: dict[str, tuple[str, ...]] = {}
        n_kinds = len(kinds)
        progress = self.progress
        pause = self.pause
        last_zxid = self.last_zxid
        for n, reply in enumerate(self.pipeline.replies(ops)):
            if n < n_kinds:
                if reply is None:
                    append(None)
                else:
                    data, stat = cast("tuple[bytes | None, ZnodeStat]", reply)
                    if stat.mzxid > last_zxid:
                        last_zxid = stat.mzxid
                    append(kinds[n].decode(data, stat))
            elif reply is not None:
                children[lists[n - n_kinds]] = tuple(reply)  # type: ignore[arg-type]
            if progress is not None and n % _PROGRESS_EVERY == 0 and n:
                progress(self.done + n, self.total)
            if pause is not None and not pause.done:
                pause.check(self.done + n + 1, self.pipeline.session.kazoo.client_id)
        self.last_zxid = last_zxid
        self.done += len(ops)
        if progress is not None:
            progress(self.done, self.total)
        return decoded, children


def read_cluster(
    session: ZkSession,
    *,
    window: int = DEFAULT_WINDOW,
    batch: int = DEFAULT_BATCH,
    progress: ProgressCallback | None = None,
    watch: bool = True,
    multi_read: bool = True,
    stats: ReadStats | None = None,
    pause: ReadHook | None = None,
) -> ClusterSnapshot:
    """Read the Kafka tree under the session's chroot into a `ClusterSnapshot`.

    Args:
        session: an open session (`open_session` or `session_for_client`).
        window: maximum reads in flight.
        batch: reads per multiRead request.
        progress: called as `progress(done, total)` while reading (rich stays out of zkreader).
        watch: arm a watch on every znode read, reporting to `session.changes`.
        multi_read: use ZooKeeper 3.6+'s multiRead (falls back automatically when absent).
        stats: filled with the read's figures when given.
        pause: test-only hook told of every read result (`ZK2KRAFT_TEST_PAUSE_READ`, see
            `writers.ReadPause`); None outside fault tests.

    Returns:
        The snapshot; missing optional znodes are None/empty, a tree without `/brokers` is an
        empty cluster.

    Raises:
        ZnodeFormatError: a znode is malformed or of an unknown version (names the path).
        ZkUnreachableError: the connection or session was lost, or a read was not authorized.
    """
    with paused_gc():
        return _read(session, window=window, batch=batch, progress=progress, watch=watch,
                     multi_read=multi_read, stats=stats, pause=pause)


def _read(session: ZkSession, *, window: int, batch: int, progress: ProgressCallback | None,
          watch: bool, multi_read: bool, stats: ReadStats | None, pause: ReadHook | None
          ) -> ClusterSnapshot:
    started = time.monotonic()
    feed = session.changes if watch else None
    pipeline = ReadPipeline(session, window=window, batch=batch, feed=feed,
                            multi_read=multi_read)
    walk = _Walk(pipeline, progress, pause)

    # Round 1: singletons and the lists of every entity kind.
    singles: list[Any] = [ControllerZnodeKind(), ControllerEpochZnodeKind(), ClusterIdZnodeKind(),
                          FeatureZnodeKind(), ProducerIdBlockZnode(), MigrationZnodeKind()]
    lists = [_paths.BROKER_IDS, _paths.TOPICS, _paths.DELETE_TOPICS, _paths.ACL_LITERAL_ROOT,
             _paths.ACL_EXTENDED_ROOT, _paths.TOKENS, _paths.LOG_DIR_EVENTS]
    lists += [_paths.config_entities(t) for t in _paths.CONFIG_ENTITY_TYPES]
    got1, c1 = walk.round(singles, lists)
    controller, controller_epoch, cluster_id, feature, pid_block, migration = got1

    def kids(children: dict[str, tuple[str, ...]], path: str) -> tuple[str, ...]:
        return children.get(path, ())

    # Round 2: entities named by those lists, and the next level of nested lists.
    broker_kinds = [BrokerZnode(b) for b in _broker_ids(kids(c1, _paths.BROKER_IDS))]
    topic_kinds = [TopicZnode(name) for name in _topic_names(kids(c1, _paths.TOPICS))]
    config_kinds = [ConfigZnodeKind(f"{t}/{name}") for t in _paths.CONFIG_ENTITY_TYPES
                    for name in kids(c1, _paths.config_entities(t))]
    token_kinds = [TokenZnode(name) for name in kids(c1, _paths.TOKENS)]
    event_kinds = [LogDirEventZnode(name) for name in kids(c1, _paths.LOG_DIR_EVENTS)
                   if name.startswith(_LOG_DIR_EVENT_PREFIX)]
    users = kids(c1, _paths.config_entities("users"))
    literal_types = [_acl_type(_paths.ACL_LITERAL_ROOT, t)
                     for t in kids(c1, _paths.ACL_LITERAL_ROOT)]
    patterns = [_acl_pattern(p) for p in kids(c1, _paths.ACL_EXTENDED_ROOT)]
    lists2 = ([_paths.user_clients(u) for u in users]
              + [_paths.acl_literal_type(t) for t in literal_types]
              + [f"{_paths.ACL_EXTENDED_ROOT}/{p}" for p in patterns])
    got2, c2 = walk.round([*broker_kinds, *topic_kinds, *config_kinds, *token_kinds,
                           *event_kinds], lists2)
    found = [x for x in got2 if x is not None]
    brokers: dict[int, Broker] = {b.broker_id: b for b in found if isinstance(b, Broker)}
    topics: dict[str, Topic] = {t.name: t for t in found if isinstance(t, Topic)}
    configs: list[ConfigZnode] = [c for c in found if isinstance(c, ConfigZnode)]
    tokens: dict[str, DelegationToken] = {
        t.token_id: t for t in found if isinstance(t, DelegationToken)}
    events: list[LogDirEvent] = [e for e in found if isinstance(e, LogDirEvent)]

    # Round 3: partition states, user+client quotas, literal ACLs, prefixed-ACL type lists.
    state_kinds = [PartitionStateZnode(t.name, p) for t in topics.values()
                   for p in sorted(t.assignment)]
    user_client_kinds = [ConfigZnodeKind(f"users/{u}/clients/{c}") for u in users
                         for c in kids(c2, _paths.user_clients(u))]
    acl_kinds = [AclZnode("LITERAL", t, name) for t in literal_types
                 for name in kids(c2, _paths.acl_literal_type(t))]
    ext_types = [(p, _acl_type(f"{_paths.ACL_EXTENDED_ROOT}/{p}", t)) for p in patterns
                 for t in kids(c2, f"{_paths.ACL_EXTENDED_ROOT}/{p}")]
    got3, c3 = walk.round([*state_kinds, *user_client_kinds, *acl_kinds],
                          [_paths.acl_extended_type(p, t) for p, t in ext_types])
    states: dict[tuple[str, int], PartitionState] = {}
    acls: list[AclResource] = []
    for x in got3:
        if isinstance(x, PartitionState):
            states[(x.topic, x.partition)] = x
        elif isinstance(x, ConfigZnode):
            configs.append(x)
        elif isinstance(x, AclResource):
            acls.append(x)

    # Round 4: prefixed (extended) ACL resources.
    ext_kinds = [AclZnode(ACL_PATTERNS[p], t, name) for p, t in ext_types
                 for name in kids(c3, _paths.acl_extended_type(p, t))]
    if ext_kinds:
        got4, _ = walk.round(ext_kinds, [])
        acls += [a for a in got4 if a is not None]

    snapshot = _assemble(
        session.chroot, cluster_id=cluster_id, controller=controller,
        controller_epoch=controller_epoch, feature=feature, brokers=brokers, topics=topics,
        states=states, pending=kids(c1, _paths.DELETE_TOPICS), configs=configs, acls=acls,
        tokens=tokens, pid_block=pid_block, events=events, migration=migration,
        last_zxid=walk.last_zxid,
    )
    elapsed = time.monotonic() - started
    log.info("read %d znodes in %d rounds, %.2fs (%.0f/s)", walk.done, walk.rounds, elapsed,
             walk.done / elapsed if elapsed else 0.0)
    if stats is not None:
        stats.reads, stats.rounds, stats.elapsed_s = walk.done, walk.rounds, elapsed
        stats.max_in_flight = pipeline.max_in_flight
    return snapshot


def _assemble(chroot: str, *, cluster_id: Any, controller: Any, controller_epoch: Any,
              feature: Any, brokers: dict[int, Broker], topics: dict[str, Topic],
              states: dict[tuple[str, int], PartitionState], pending: Iterable[str],
              configs: list[ConfigZnode], acls: list[AclResource],
              tokens: dict[str, DelegationToken], pid_block: Any, events: list[LogDirEvent],
              migration: Any, last_zxid: int) -> ClusterSnapshot:
    by_type: dict[str, dict[str, ConfigZnode]] = {t: {} for t in _paths.CONFIG_ENTITY_TYPES}
    user_client: dict[tuple[str, str], ConfigZnode] = {}
    for c in configs:
        parts = c.entity_path.split("/")
        if len(parts) == 4:  # users/<u>/clients/<c>
            user_client[(parts[1], parts[3])] = c
        else:
            by_type[parts[0]][parts[1]] = c
    acls.sort(key=lambda a: (a.pattern_type, a.resource_type, a.name))
    return ClusterSnapshot(
        chroot=chroot,
        cluster_id=cluster_id,
        controller=controller,
        controller_epoch=controller_epoch,
        feature=feature,
        brokers=dict(sorted(brokers.items())),
        topics=dict(sorted(topics.items())),
        partition_states=states,
        pending_deletions=frozenset(pending),
        topic_configs=by_type["topics"],
        broker_configs=by_type["brokers"],
        user_configs=by_type["users"],
        client_configs=by_type["clients"],
        user_client_configs=user_client,
        ip_configs=by_type["ips"],
        acls=tuple(acls),
        delegation_tokens=tokens,
        producer_id_block=pid_block,
        log_dir_events=tuple(sorted(events, key=lambda e: e.name)),
        migration=migration,
        last_zxid=last_zxid,
    )


def _broker_id(name: str) -> int:
    if not name.isascii() or not name.isdigit() or int(name) > INT32_MAX:
        raise ZnodeFormatError(_paths.child(_paths.BROKER_IDS, name),
                               f"broker registration name is not a broker id in 0..{INT32_MAX}")
    return int(name)


def _broker_ids(names: Sequence[str]) -> list[int]:
    """The broker ids `/brokers/ids` lists; two children naming one id ("01" and "1") refused.

    Kafka reads the children with `toInt` and each registration at `/brokers/ids/<id>`, so of
    "01" and "1" only the second is ever read: one broker's registration is silently lost.
    """
    seen: dict[int, str] = {}
    ids = []
    for name in names:
        broker_id = _broker_id(name)
        if (earlier := number_named_twice(seen, broker_id, name)) is not None:
            first, second = sorted((earlier, name))
            raise ZnodeFormatError(
                _paths.child(_paths.BROKER_IDS, second),
                f"{_paths.child(_paths.BROKER_IDS, first)} and "
                f"{_paths.child(_paths.BROKER_IDS, second)} both name broker {broker_id}: "
                "Kafka reads the children as numbers, so one registration would be lost; "
                "remove the one no running broker owns")
        ids.append(broker_id)
    return ids


def _topic_names(names: Sequence[str]) -> Sequence[str]:
    """The topic names, if Kafka allows every one of them; else an error naming all of them.

    A name Kafka's `Topic.validate` refuses can only get into ZooKeeper by writing there
    directly: bad input (exit 2), like a malformed znode. Unlike a malformed znode, the error
    lists every such topic at once, so the operator fixes them in one pass.
    """
    bad = [(n, p) for n in names if (p := topic_name_problem(n)) is not None]
    if not bad:
        return names
    (first, problem), rest = bad[0], bad[1:]
    if rest:
        others = ", ".join(_paths.child(_paths.TOPICS, n)[:300] for n, _ in rest[:20])
        problem += f"; {len(rest)} more topic(s) with illegal names: {others}"
    raise ZnodeFormatError(_paths.child(_paths.TOPICS, first), problem)


def _acl_type(parent: str, name: str) -> str:
    if name not in _paths.ACL_RESOURCE_TYPES:
        raise ZnodeFormatError(_paths.child(parent, name), f"unknown ACL resource type {name!r}")
    return name


def _acl_pattern(name: str) -> str:
    if name not in ACL_PATTERNS:
        raise ZnodeFormatError(_paths.child(_paths.ACL_EXTENDED_ROOT, name),
                               f"unknown ACL pattern type {name!r} (expected 'prefixed')")
    return name
