"""The topics image: every topic and its partitions' registrations, by name and by id."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from verify._frozen_map import FrozenMap
from writers import MetadataRecord


@dataclass(frozen=True, slots=True)
class PartitionImage:
    """One partition's registration (Kafka's `PartitionRegistration`)."""

    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    removing_replicas: tuple[int, ...] = ()
    adding_replicas: tuple[int, ...] = ()
    leader: int = -1
    leader_recovery_state: int = 0
    leader_epoch: int = 0
    partition_epoch: int = 0
    directories: tuple[str, ...] = ()
    elr: tuple[int, ...] | None = None
    last_known_elr: tuple[int, ...] | None = None

    def record(self, topic_id: str, partition_id: int) -> MetadataRecord:
        """The version-0 `PartitionRecord` (no directories, as Kafka's migration writes)."""
        data: dict[str, Any] = {
            "partitionId": partition_id,
            "topicId": topic_id,
            "replicas": list(self.replicas),
            "isr": list(self.isr),
            "removingReplicas": list(self.removing_replicas),
            "addingReplicas": list(self.adding_replicas),
            "leader": self.leader,
            "leaderEpoch": self.leader_epoch,
            "partitionEpoch": self.partition_epoch,
            "leaderRecoveryState": self.leader_recovery_state,
        }
        return MetadataRecord("PARTITION_RECORD", 0, data)


@dataclass(frozen=True, slots=True)
class TopicImage:
    """A topic: name, Uuid text and partitions by id."""

    name: str
    topic_id: str
    partitions: FrozenMap[int, PartitionImage]

    def records(self) -> list[MetadataRecord]:
        """`TopicRecord` then its `PartitionRecord`s in partition order (Kafka's `write`)."""
        out = [MetadataRecord("TOPIC_RECORD", 0, {"name": self.name, "topicId": self.topic_id})]
        out += [self.partitions[p].record(self.topic_id, p) for p in sorted(self.partitions)]
        return out


@dataclass(frozen=True, slots=True)
class TopicsImage:
    """Topics by id and by name; the two maps always hold the same topics."""

    by_id: FrozenMap[str, TopicImage]
    by_name: FrozenMap[str, TopicImage]

    EMPTY: ClassVar[TopicsImage]

    def records(self) -> list[MetadataRecord]:
        """Every topic's records, topics in name order."""
        out: list[MetadataRecord] = []
        for name in sorted(self.by_name):
            out += self.by_name[name].records()
        return out


TopicsImage.EMPTY = TopicsImage(FrozenMap(), FrozenMap())
