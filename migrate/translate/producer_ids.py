"""The `producer_ids` kind: `/latest_producer_id_block` as a `ProducerIdsRecord`.

The record itself is `migrate.translate.framing.producer_id_records` (Kafka writes the next
producer id as block end + 1, KAFKA-15552). This module is the kind's registry entry
(`migrate.translate.kinds`): one entity, no name, never removed.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator

from migrate.translate.framing import producer_id_records
from migrate.translate.kind import EntityContext, EntityDelta, EntityKind
from verify import MetadataImage
from zkreader import ZK_KINDS, ClusterSnapshot, EntityKey

__all__ = ["PRODUCER_IDS_KIND"]


def _from_nothing(key: EntityKey, snapshot: ClusterSnapshot, ctx: EntityContext) -> EntityDelta:
    out = EntityDelta()
    if snapshot.producer_id_block is not None:
        out.records = producer_id_records(snapshot.producer_id_block)
    return out


def _diff(key: EntityKey, image: MetadataImage, snap: ClusterSnapshot,
          ctx: EntityContext) -> EntityDelta:
    block = snap.producer_id_block
    if block is None:
        return EntityDelta()  # Kafka never removes the block; nothing can express it
    record = producer_id_records(block)[0]
    held = image.producer_ids
    if (held.next_producer_id, held.broker_id, held.broker_epoch) == (
            record.data["nextProducerId"], record.data["brokerId"],
            record.data["brokerEpoch"]):
        return EntityDelta()
    return EntityDelta([record])


def _keys(snapshot: ClusterSnapshot) -> Iterator[EntityKey]:
    if snapshot.producer_id_block is not None:
        yield EntityKey("producer_ids", "")


def _image_keys(image: MetadataImage, named: Collection[EntityKey]) -> Iterator[EntityKey]:
    if image.producer_ids.next_producer_id >= 0:
        yield EntityKey("producer_ids", "")


PRODUCER_IDS_KIND = EntityKind(
    name="producer_ids",
    zk=ZK_KINDS["producer_ids"],
    from_nothing=_from_nothing,
    diff=_diff,
    snapshot_keys=_keys,
    image_keys=_image_keys,
    records=frozenset({"PRODUCER_IDS_RECORD"}),
    expected=("producer_ids",),
    parity=("producer_ids",),
    snapshot_lines=("producer_id_block",),
)
