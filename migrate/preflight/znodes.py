"""Znode paths and id lists as the pre-flight's findings print them, and the topics it judges."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from zkreader import ClusterSnapshot, Topic, migrating_topic

__all__ = ["LEADER_NONE", "RECOVERING", "id_list", "id_sequence", "migrated_topics", "state_path",
           "topic_path"]

LEADER_NONE = -1
RECOVERING = 1  # leader_recovery_state


def migrated_topics(snapshot: ClusterSnapshot) -> Iterator[Topic]:
    """The topics `migrate` writes, by name: the one rule, `zkreader.migrating_topic`."""
    for name in sorted(snapshot.topics):
        if migrating_topic(snapshot, name):
            yield snapshot.topics[name]


def topic_path(name: str) -> str:
    return f"/brokers/topics/{name}"


def state_path(topic: str, partition: int) -> str:
    return f"/brokers/topics/{topic}/partitions/{partition}/state"


def id_list(ids: Iterable[int]) -> str:
    return ", ".join(str(i) for i in sorted(ids))


def id_sequence(ids: Iterable[int]) -> str:
    return ", ".join(str(i) for i in ids)
