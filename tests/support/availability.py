"""Is a Kafka cluster available, as its clients see it? (issue 16: every recovery rehearsal ends
with Kafka's own word on the cluster, not zk2kraft's).

Available means: every partition of every topic has a leader and its ISR holds all its replicas
(Metadata, asked through the brokers), and an idempotent acks=all record is produced and consumed
back (`produce_and_consume`). The canary's own loop (`migrate.online.canary.Canary`, run by the test
across a kill and the recovery) says whether an acknowledged record was lost.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from kazoo.client import KazooClient

from tests.support.kafka import KafkaZkBroker
from tests.support.migration_cluster import produce_and_consume

__all__ = ["partitions_not_whole", "restart_without_metadata_log", "wait_available"]


def partitions_not_whole(bootstrap: str, expected: Mapping[str, int]) -> list[str]:
    """Every partition Metadata shows without a leader or with an ISR short of its replicas, as
    `topic-p leader L replicas R isr I`, and every `expected` topic (name -> partition count)
    missing or with another count ('no answer: ...' when no broker answered)."""
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": bootstrap})
    try:
        meta = admin.list_topics(timeout=15)
    except Exception as exc:  # noqa: BLE001 - what librdkafka says is the finding
        return [f"no answer: {exc}"]
    finally:
        del admin
    bad = [f"{name}: {len(meta.topics[name].partitions) if name in meta.topics else 'no'} "
           f"partitions, expected {count}" for name, count in sorted(expected.items())
           if name not in meta.topics or len(meta.topics[name].partitions) != count]
    for name, topic in sorted(meta.topics.items()):
        if topic.error is not None:
            bad.append(f"{name}: {topic.error}")
            continue
        for p in sorted(topic.partitions.values(), key=lambda p: p.id):
            if p.leader < 0 or sorted(p.isrs) != sorted(p.replicas):
                bad.append(f"{name}-{p.id} leader {p.leader} replicas {p.replicas} "
                           f"isr {p.isrs}")
    return bad


def wait_available(bootstrap: str, topic: str, expected: Mapping[str, int],
                   timeout_s: float = 180.0) -> None:
    """Wait until every `expected` topic is there and every partition is whole (a restarted
    broker's replicas rejoin their ISRs within a few fetches), then produce and consume one
    record on `topic`.

    Raises:
        AssertionError: partitions still not whole after `timeout_s` (named), or the record
            was not produced or consumed back.
    """
    deadline = time.monotonic() + timeout_s
    bad = partitions_not_whole(bootstrap, expected)
    while bad:
        assert time.monotonic() < deadline, (
            f"not available after {timeout_s:.0f}s: {len(bad)} partition(s) without a leader "
            f"or a full ISR, e.g. {bad[:8]}")
        time.sleep(1.0)
        bad = partitions_not_whole(bootstrap, expected)
    produce_and_consume(bootstrap, topic)


def restart_without_metadata_log(broker: KafkaZkBroker, zk: KazooClient, bootstrap: str,
                                 expected: Mapping[str, int], *,
                                 update: Mapping[str, str] | None = None,
                                 remove: Sequence[str] = ()) -> None:
    """"Start over" step (4), or the hand-back's roll, for one ZooKeeper-mode broker: stopped,
    its `__cluster_metadata-0` deleted (its metadata.log.dir is its only log.dir here), started
    with the `remove`d properties gone and the `update`d ones set, and available again
    (`wait_available` on the first `expected` topic) before the caller goes on to the next."""
    broker.stop()
    shutil.rmtree(Path(broker.properties["log.dirs"]) / "__cluster_metadata-0",
                  ignore_errors=True)
    registration = f"/brokers/ids/{broker.broker_id}"
    broker.restart(remove=remove, update=update,
                   ready_to_start=lambda: zk.exists(registration) is None)
    wait_available(bootstrap, next(iter(expected)), expected, 240)
