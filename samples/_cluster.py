"""Sample-cluster generator: writes a Kafka tree into ZooKeeper exactly as ZK-mode Kafka 3.x does.

Why: the demo, the tests and the benchmarks need a realistic Kafka tree (every entity kind, every
blocker and warning the pre-flight must find) without running Kafka brokers. Formats follow
Kafka's `ZkData.scala`: broker registrations of JSON versions
2, 4 and 5 as ephemerals of the generating session, `/controller` and `/controller_epoch`, topics v3
with `topic_id`, partition states whose znode version (the partition epoch) is real because the
data was set several times, configs, quotas, SCRAM, ACLs, a delegation token, the producer-id block,
and the paths `createTopLevelPaths()` pre-creates.

Speed: creates are batched into ZooKeeper multi-ops (`client.transaction()`), and up to `window`
of them are in flight at once. ZooKeeper applies one session's requests in order, so a batch may
create children of a node created by an earlier, still unanswered batch. Every result is checked.

The ephemeral broker and controller znodes belong to the session of the client passed in: keep
that client open for as long as they should exist (the CLI's `--hold` does that).

This module sends the writes; what to write comes from `samples._spec` (the recipe and
the manifest), `samples._values` (seeded ids, credentials, znode JSON) and
`samples._plan` (the writes in dependency order). Import them from here.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

from kazoo.client import KazooClient

from samples._plan import _Op, build_plan
from samples._spec import (
    CONTROLLER_EPOCH,
    SCRAM_ITERATIONS,
    TOP_LEVEL_PATHS,
    SampleCase,
    SampleManifest,
    SampleSpec,
)
from samples._values import _json, kafka_uuid, scram_credential

__all__ = [
    "CONTROLLER_EPOCH",
    "SCRAM_ITERATIONS",
    "TOP_LEVEL_PATHS",
    "SampleCase",
    "SampleManifest",
    "SampleSpec",
    "build_plan",
    "generate_sample_cluster",
    "kafka_uuid",
    "scram_credential",
]


def _batches(ops: list[_Op], size: int) -> Iterator[list[_Op]]:
    for i in range(0, len(ops), size):
        yield ops[i : i + size]


def _check(results: object, batch: list[_Op]) -> None:
    """Raise on the first failed op of a committed multi-op (naming its path)."""
    if isinstance(results, Exception):
        raise RuntimeError(f"multi-op starting at {batch[0].path} failed: {results!r}")
    assert isinstance(results, list)
    for op, res in zip(batch, results, strict=False):
        if isinstance(res, Exception) and type(res).__name__ != "RolledBackError":
            raise RuntimeError(f"sample write {op.kind} {op.path} failed: {res!r}")
    for op, res in zip(batch, results, strict=False):
        if isinstance(res, Exception):
            raise RuntimeError(f"multi-op with {op.path} rolled back: {res!r}")


def _run(client: KazooClient, ops: list[_Op], window: int, batch_ops: int) -> int:
    """Send `ops` as multi-ops, `window` in flight; return the number of multi-ops sent."""
    inflight: deque[tuple[Any, list[_Op]]] = deque()
    sent = 0
    for batch in _batches(ops, batch_ops):
        tx = client.transaction()
        for op in batch:
            if op.kind == "create":
                tx.create(op.path, op.data, ephemeral=op.ephemeral, sequence=op.sequence)
            else:
                tx.set_data(op.path, op.data)
        inflight.append((tx.commit_async(), batch))
        sent += 1
        if len(inflight) >= window:
            res, b = inflight.popleft()
            _check(res.get(), b)
    while inflight:
        res, b = inflight.popleft()
        _check(res.get(), b)
    return sent


def generate_sample_cluster(client: KazooClient, spec: SampleSpec | None = None,
                            *, clock: Callable[[], float] = time.monotonic) -> SampleManifest:
    """Write the sample Kafka tree under `client`'s chroot (which must hold no Kafka tree yet).

    Args:
        client: a started kazoo client; its chroot is the cluster's chroot. The ephemeral broker
            and controller znodes belong to its session: keep it open while they are needed.
        spec: what to write (default `SampleSpec.clean()`).
        clock: seconds clock for the elapsed figure.

    Returns:
        The manifest of what was written.

    Raises:
        ValueError: the spec is impossible (names the field).
        RuntimeError: a write failed (names the path), e.g. the chroot already holds a tree.
    """
    spec = spec or SampleSpec.clean()
    t0 = clock()
    plan = build_plan(spec)
    if client.chroot:
        client.ensure_path("/")
    if client.exists("/brokers") is not None:
        raise RuntimeError(f"{client.chroot or '/'} already holds a Kafka tree (/brokers exists)")
    _run(client, plan.ops, spec.window, spec.batch_ops)
    if spec.log_dir_event:  # a persistent-sequential notification, as the broker writes it
        name = client.create(
            "/log_dir_event_notification/log_dir_event_",
            _json({"version": 1, "broker": spec.brokers, "event": 1}),
            sequence=True,
        )
        plan.mark(SampleCase.LOG_DIR_EVENT, name)
        plan.created.add(name)
    session_id = client.client_id[0] if client.client_id else 0
    return SampleManifest(
        spec=spec,
        cluster_id=kafka_uuid(spec.seed, "cluster"),
        broker_versions=dict(plan.broker_versions),
        topic_ids=dict(plan.topic_ids),
        paths={k: tuple(v) for k, v in plan.paths.items()},
        state_versions=dict(plan.state_versions),
        ephemeral_paths=tuple(plan.ephemerals),
        notifications=tuple(plan.notifications),
        session_id=session_id,
        secrets=tuple(plan.secrets),
        brokers=spec.brokers,
        topics=len(plan.topic_ids),
        partitions_written=plan.partitions_written,
        partitions_to_migrate=plan.partitions_to_migrate,
        state_znodes=plan.state_znodes,
        znodes=len(plan.created),
        ops=len(plan.ops) + (1 if spec.log_dir_event else 0),
        elapsed_s=clock() - t0,
    )
