"""The pre-flight's warnings: states that migrate, but that an operator should know about.

Kafka 3.9's rules (`ZkMigrationClient.readAllMetadata`, `KRaftMigrationDriver`): no listener the
controllers share with the brokers, topics queued for deletion (skipped), reassignments in flight,
partitions without a leader or with an ISR outside their replicas.
"""

from __future__ import annotations

from collections.abc import Iterator

from migrate.preflight.findings import Finding
from migrate.preflight.znodes import (
    LEADER_NONE,
    RECOVERING,
    id_list,
    id_sequence,
    migrated_topics,
    state_path,
    topic_path,
)
from zkreader import ClusterSnapshot, PartitionState

__all__ = ["NO_SHARED_LISTENER", "TOPIC_METRIC_NAME_COLLISION", "warnings"]

NO_SHARED_LISTENER = "NO_SHARED_LISTENER"


def warnings(snapshot: ClusterSnapshot, *, offline: bool) -> list[Finding]:
    """Every warning about `snapshot`, in the order `preflight` reports them."""
    return [
        *_no_shared_listener(snapshot),
        *_pending_deletions(snapshot),
        *_reassignments(snapshot),
        *_partition_warnings(snapshot, offline=offline),
        *_metric_name_collisions(snapshot),
    ]


def _no_shared_listener(snapshot: ClusterSnapshot) -> Iterator[Finding]:
    # A KRaft controller in migration mode sends UpdateMetadata/LeaderAndIsr/StopReplica to
    # every ZooKeeper-mode broker on one listener, its `inter.broker.listener.name` (Kafka 3.9
    # ControllerChannelManager via Broker.node(listenerName)). A broker that does not advertise
    # it fails with BrokerEndPointNotAvailableException in KRAFT_CONTROLLER_TO_BROKER_COMM, over
    # and over, and the migration never reaches DUAL_WRITE. ZooKeeper does not record the
    # controllers' setting, but when no name is advertised by every broker, none can work.
    listeners = {b.broker_id: sorted({e.listener for e in b.endpoints})
                 for b in snapshot.brokers.values()}
    if len(listeners) < 2 or set.intersection(*(set(n) for n in listeners.values())):
        return
    groups: dict[tuple[str, ...], list[int]] = {}
    for broker_id in sorted(listeners):
        groups.setdefault(tuple(listeners[broker_id]), []).append(broker_id)
    described = "; ".join(
        f"{'broker' if len(ids) == 1 else 'brokers'} {id_list(ids)} "
        f"{'advertises' if len(ids) == 1 else 'advertise'} {', '.join(names) or 'nothing'}"
        for names, ids in sorted(groups.items(), key=lambda g: g[1][0]))
    yield Finding(
        NO_SHARED_LISTENER,
        f"the brokers share no listener name ({described}): the KRaft controllers reach every "
        "ZooKeeper-mode broker on one listener, their inter.broker.listener.name, and a broker "
        "without it makes the controller that takes over fail in "
        "KRAFT_CONTROLLER_TO_BROKER_COMM (BrokerEndPointNotAvailableException) and never reach "
        "DUAL_WRITE. Give every broker that listener (a rolling restart) before the "
        "controllers take over.",
        "/brokers/ids",
    )


def _pending_deletions(snapshot: ClusterSnapshot) -> Iterator[Finding]:
    for name in sorted(snapshot.pending_deletions):
        yield Finding(
            "TOPIC_PENDING_DELETION",
            f"topic {name!r} is queued for deletion and will not be migrated; the brokers "
            "reconcile (and set aside) its logs after the migration.",
            f"/admin/delete_topics/{name}",
        )


def _reassignments(snapshot: ClusterSnapshot) -> Iterator[Finding]:
    for topic in migrated_topics(snapshot):
        moving = sorted(set(topic.adding_replicas) | set(topic.removing_replicas))
        if moving:
            yield Finding(
                "REASSIGNMENT_IN_FLIGHT",
                f"topic {topic.name!r} partition(s) {id_list(moving)} are being reassigned; "
                "adding/removing replicas are carried over and KRaft completes the move.",
                topic_path(topic.name),
            )


def _partition_warnings(snapshot: ClusterSnapshot, *, offline: bool) -> Iterator[Finding]:
    for topic in migrated_topics(snapshot):
        for partition in sorted(topic.assignment):
            replicas = topic.assignment[partition]
            state = snapshot.partition_states.get((topic.name, partition))
            yield from _partition_findings(topic.name, partition, replicas, state, offline)


def _partition_findings(
    topic: str,
    partition: int,
    replicas: tuple[int, ...],
    state: PartitionState | None,
    offline: bool = False,
) -> Iterator[Finding]:
    path = state_path(topic, partition)
    tp = f"{topic}-{partition}"
    if state is None:
        leader = replicas[0] if replicas else LEADER_NONE
        yield Finding(
            "PARTITION_STATE_MISSING",
            f"{tp} has no state znode: Kafka's default applies (ISR = replicas "
            f"[{id_sequence(replicas)}], leader = first replica {leader}, epochs 0).",
            path,
        )
        return
    if state.leader == LEADER_NONE and offline:
        yield Finding(
            "PARTITION_OFFLINE",
            f"{tp} has no leader (leader -1): expected with the brokers stopped (its last ISR "
            f"member, broker(s) {id_sequence(state.isr)}, stopped after the others). "
            "Not a problem: "
            "KRaft elects it again when that broker starts.",
            path,
        )
    elif state.leader == LEADER_NONE:
        yield Finding(
            "PARTITION_OFFLINE",
            f"{tp} has no leader (leader -1): it stays offline after the migration until a "
            "replica in its ISR comes back.",
            path,
        )
    elif state.leader not in state.isr:
        yield Finding(
            "LEADER_NOT_IN_ISR",
            f"{tp}: leader {state.leader} is not in ISR [{id_sequence(state.isr)}]; carried over "
            "as is.",
            path,
        )
    outside = set(state.isr) - set(replicas)
    if outside:
        yield Finding(
            "ISR_NOT_IN_REPLICAS",
            f"{tp}: ISR member(s) {id_list(outside)} are not replicas [{id_sequence(replicas)}]; "
            "carried over as is.",
            path,
        )
    if state.leader_recovery_state == RECOVERING:
        yield Finding(
            "LEADER_RECOVERING",
            f"{tp}: leader_recovery_state is RECOVERING (after an unclean election); the "
            "leader stays fenced from some requests until it recovers.",
            path,
        )


TOPIC_METRIC_NAME_COLLISION = "TOPIC_METRIC_NAME_COLLISION"


def _metric_name_collisions(snapshot: ClusterSnapshot) -> Iterator[Finding]:
    # Kafka treats topic names that differ only in '.' against '_' as colliding
    # (`Topic.hasCollision`: both unified with '.' -> '_'), "due to limitations in metric
    # names" (kafka-topics.sh's warning at creation): per-topic metrics of `a.b` and `a_b` may
    # be reported as one. Kafka refuses to create the second of such a pair ("collides with
    # existing topic"), but a pair can still be in ZooKeeper (written directly, or from before
    # the check), and the migration carries both over as they are. A warning, not a blocker:
    # both topics migrate and serve; only their metrics cannot be told apart.
    groups: dict[str, list[str]] = {}
    for topic in migrated_topics(snapshot):
        groups.setdefault(topic.name.replace(".", "_"), []).append(topic.name)
    for names in sorted(sorted(g) for g in groups.values() if len(g) > 1):
        quoted = " and ".join(repr(n) for n in names)
        yield Finding(
            TOPIC_METRIC_NAME_COLLISION,
            f"topics {quoted} collide in Kafka's metric names (they differ only in '.' "
            "against '_'; kafka-topics.sh warns of it at creation and Kafka refuses to create "
            "the second of such a pair): their per-topic metrics may be reported as one. Both "
            "are migrated as they are; rename one (a new topic and a copy of its data) if its "
            "metrics matter.",
            topic_path(names[-1]),
        )
