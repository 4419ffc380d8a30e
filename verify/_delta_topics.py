"""The topics delta: topics and their partitions, created, changed and removed."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from verify._delta_base import Data
from verify.errors import ReplayError
from verify.image import MIGRATING_DIRECTORY, FrozenMap, PartitionImage, TopicImage, TopicsImage
from writers import NO_LEADER_CHANGE


def _ints(value: Any) -> tuple[int, ...]:
    # The codec yields lists of ints already; tuple() keeps replay at ~1M partitions cheap.
    return tuple(value) if value else ()


_MIGRATING: dict[int, tuple[str, ...]] = {}


def _migrating(n: int) -> tuple[str, ...]:
    """`n` replicas in `DirectoryId.MIGRATING`, one shared tuple per length (1M partitions)."""
    dirs = _MIGRATING.get(n)
    if dirs is None:
        dirs = _MIGRATING[n] = (MIGRATING_DIRECTORY,) * n
    return dirs


class TopicDelta:
    """Partition changes of one topic on top of its image (Kafka's `TopicDelta`).

    Attributes:
        base: the topic as it was (a created topic starts from an empty `TopicImage`).
        partitions: partition id -> its new registration, for the partitions this delta
            created or changed. Read-only for callers.
    """

    __slots__ = ("base", "partitions")

    def __init__(self, base: TopicImage) -> None:
        self.base = base
        self.partitions: dict[int, PartitionImage] = {}

    @property
    def topic_id(self) -> str:
        """The topic's id."""
        return self.base.topic_id

    @property
    def name(self) -> str:
        """The topic's name."""
        return self.base.name

    def changed_partitions(self) -> frozenset[int]:
        """Ids of the partitions this delta created or changed."""
        return frozenset(self.partitions)

    def partition(self, partition_id: int) -> PartitionImage | None:
        """The partition as of this delta, None if the topic has no such partition."""
        got = self.partitions.get(partition_id)
        return got if got is not None else self.base.partitions.get(partition_id)

    def apply(self) -> TopicImage:
        """The topic after this delta (the base itself when nothing changed)."""
        if not self.partitions:
            return self.base
        parts = self.base.partitions.thaw()
        parts.update(self.partitions)
        return TopicImage(self.base.name, self.base.topic_id, FrozenMap(parts))


class TopicsDelta:
    """Created, changed and deleted topics (Kafka's `TopicsDelta`)."""

    def __init__(self, base: TopicsImage) -> None:
        self._base = base
        self._changed: dict[str, TopicDelta] = {}
        self._created: set[str] = set()
        self._created_names: dict[str, str] = {}
        self._deleted: set[str] = set()

    def changed_topics(self) -> Mapping[str, TopicDelta]:
        """Topic id -> its `TopicDelta`, for topics created or changed (not deleted) here.

        A topic created and deleted within the same delta appears nowhere.
        """
        return dict(self._changed)

    def created_topic_ids(self) -> frozenset[str]:
        """Ids of the topics this delta created (still present at its end)."""
        return frozenset(self._created)

    def deleted_topic_ids(self) -> frozenset[str]:
        """Ids of base topics this delta deleted."""
        return frozenset(self._deleted)

    def _live(self, topic_id: str) -> TopicDelta:
        delta = self._changed.get(topic_id)
        if delta is not None:
            return delta
        base = self._base.by_id.get(topic_id)
        if base is None or topic_id in self._deleted:
            raise ReplayError(f"unknown topic id {topic_id}")
        delta = self._changed[topic_id] = TopicDelta(base)
        return delta

    def replay_topic(self, data: Data) -> None:
        """Apply a `TopicRecord`: a new topic with no partitions yet."""
        name, topic_id = data["name"], data["topicId"]
        other_id = self._created_names.get(name)
        if other_id is not None and other_id != topic_id and other_id in self._created:
            raise ReplayError(f"topic {name!r} already exists with id {other_id}")
        self._changed[topic_id] = TopicDelta(TopicImage(name, topic_id, FrozenMap()))
        self._created.add(topic_id)
        self._created_names[name] = topic_id

    def replay_partition(self, data: Data, version: int) -> None:
        """Apply a `PartitionRecord` (v0-2); v0 replicas live in `DirectoryId.MIGRATING`."""
        topic = self._live(data["topicId"])
        partition_id = int(data.get("partitionId", -1))
        if partition_id < 0:
            raise ReplayError(f"invalid partition id {partition_id}")
        replicas = _ints(data.get("replicas"))
        directories = tuple(data.get("directories") or ()) if version >= 1 else ()
        elr = data.get("eligibleLeaderReplicas")
        lke = data.get("lastKnownElr")
        topic.partitions[partition_id] = PartitionImage(
            replicas=replicas,
            isr=_ints(data.get("isr")),
            removing_replicas=_ints(data.get("removingReplicas")),
            adding_replicas=_ints(data.get("addingReplicas")),
            leader=int(data.get("leader", -1)),
            leader_recovery_state=int(data.get("leaderRecoveryState", 0)),
            leader_epoch=int(data.get("leaderEpoch", -1)),
            partition_epoch=int(data.get("partitionEpoch", -1)),
            directories=directories or _migrating(len(replicas)),
            elr=None if elr is None else _ints(elr),
            last_known_elr=None if lke is None else _ints(lke),
        )

    def replay_partition_change(self, data: Data) -> None:
        """Apply a `PartitionChangeRecord` (Kafka's `PartitionRegistration.merge`).

        A leader change bumps the leader epoch; every change bumps the partition epoch.
        """
        topic_id = data["topicId"]
        partition_id = int(data.get("partitionId", -1))
        topic = self._live(topic_id)
        cur = topic.partition(partition_id)
        if cur is None:
            raise ReplayError(f"unknown partition {partition_id} of topic id {topic_id}")
        replicas = cur.replicas if data.get("replicas") is None else _ints(data["replicas"])
        if data.get("directories") is not None:
            directories = tuple(data["directories"])
        elif len(replicas) != len(cur.directories):
            directories = _migrating(len(replicas))
        else:
            directories = cur.directories
        leader = int(data.get("leader", NO_LEADER_CHANGE))
        lrs = int(data.get("leaderRecoveryState", -1))
        elr, lke = data.get("eligibleLeaderReplicas"), data.get("lastKnownElr")
        topic.partitions[partition_id] = PartitionImage(
            replicas=replicas,
            isr=cur.isr if data.get("isr") is None else _ints(data["isr"]),
            removing_replicas=cur.removing_replicas
            if data.get("removingReplicas") is None
            else _ints(data["removingReplicas"]),
            adding_replicas=cur.adding_replicas
            if data.get("addingReplicas") is None
            else _ints(data["addingReplicas"]),
            leader=cur.leader if leader == NO_LEADER_CHANGE else leader,
            leader_recovery_state=cur.leader_recovery_state if lrs == -1 else lrs,
            leader_epoch=cur.leader_epoch if leader == NO_LEADER_CHANGE else cur.leader_epoch + 1,
            partition_epoch=cur.partition_epoch + 1,
            directories=directories,
            elr=cur.elr if elr is None else _ints(elr),
            last_known_elr=cur.last_known_elr if lke is None else _ints(lke),
        )

    def replay_remove(self, data: Data) -> str:
        """Apply a `RemoveTopicRecord`; returns the topic's name (its configs go too).

        Raises:
            ReplayError: the topic id is unknown.
        """
        topic_id = data["topicId"]
        if topic_id in self._created:
            name = self._changed.pop(topic_id).base.name
            self._created.discard(topic_id)
            if topic_id in self._base.by_id:
                self._deleted.add(topic_id)
            return name
        name = self._live(topic_id).base.name
        self._changed.pop(topic_id)
        self._deleted.add(topic_id)
        return name

    def finish_snapshot(self) -> None:
        """Delete every topic the snapshot did not mention."""
        for topic_id in self._base.by_id:
            if topic_id not in self._changed:
                self._deleted.add(topic_id)

    def apply(self) -> TopicsImage:
        """The next topics image; untouched topics are reused as they are."""
        if not self._changed and not self._deleted:
            return self._base
        by_id = self._base.by_id.thaw()
        by_name = self._base.by_name.thaw()
        for topic_id in self._deleted | set(self._changed):
            old = by_id.pop(topic_id, None)
            if old is not None and by_name.get(old.name) is old:
                del by_name[old.name]
        for topic_id, delta in self._changed.items():
            topic = delta.apply()
            by_id[topic_id] = topic
            by_name[topic.name] = topic
        return TopicsImage(FrozenMap(by_id), FrozenMap(by_name))
