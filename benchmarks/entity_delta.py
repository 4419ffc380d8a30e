"""Mirror step benchmark: notified paths -> entity keys -> re-read -> delta -> image, per batch.

What the online mirror pays per batch of notifications, measured against real ZooKeeper on a
generated tree: `changed_entities` (maps notified paths to keys, re-lists notified lists),
`read_entities` (re-reads those entities through the pipeline, re-arming their watches),
`delta_records` (the per-entity diff against the log's image) and `apply_records` (the image
now holds the delta). Each round changes `--changes` partition states (ISR/leader) and a few
other entities, waits for every notification (a sentinel znode created last is notified last),
then times the step. The tree size should not matter: the step is O(changes).

    python benchmarks/entity_delta.py [--partitions 10000] [--changes 200] [--rounds 5]

Prints one line per round and the median per size. Not a test: figures, not assertions.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kazoo.client import KazooClient  # noqa: E402

from migrate import TranslationOptions, delta_records, translate  # noqa: E402
from samples import SampleSpec, generate_sample_cluster
from verify import MetadataImage, apply_records, compare, expected_image  # noqa: E402
from zkreader import changed_entities, read_cluster, read_entities, session_for_client


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--partitions", type=int, nargs="+", default=[1000, 10000])
    p.add_argument("--topics", type=int, default=100)
    p.add_argument("--changes", type=int, default=200, help="partition changes per round")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--connect", help="use this ZooKeeper (host:port) instead of starting one")
    return p


def _round(gen: KazooClient, session, image, options, states: list[str], n: int, i: int):  # noqa: ANN001, ANN202
    feed = session.changes
    sentinel = f"/bench-sentinel-{i}"
    session.kazoo.exists(sentinel, watch=feed.watcher)
    tx = gen.transaction()
    for path in states[i * n % len(states):][:n]:
        data, stat = gen.get(path)
        state = json.loads(data)
        state["leader_epoch"] += 1
        state["isr"] = state["isr"][::-1]
        state["leader"] = state["isr"][0]
        tx.set_data(path, json.dumps(state).encode(), version=stat.version)
    tx.set_data("/config/brokers/<default>", json.dumps(
        {"version": 1, "config": {"num.io.threads": str(8 + i)}}).encode())
    tx.commit()
    gen.create(sentinel, b"")
    paths = []
    while True:
        event = feed.get(timeout=60)
        if event is None or event.path == sentinel:
            break
        paths.append(event.path)
    t0 = time.perf_counter()
    keys = changed_entities(session, paths)
    t1 = time.perf_counter()
    part = read_entities(session, keys)
    t2 = time.perf_counter()
    delta = delta_records(image, part, keys, options)
    t3 = time.perf_counter()
    image = apply_records(image, delta.records)
    t4 = time.perf_counter()
    return image, len(paths), len(delta.records), (t1 - t0, t2 - t1, t3 - t2, t4 - t3)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    server = None
    if args.connect:
        connect = args.connect
    else:
        from tests.support.zk import ZkServer

        server = ZkServer(heap="512m").start()
        connect = server.connect
    admin = KazooClient(connect)
    admin.start(timeout=30)
    try:
        for partitions in args.partitions:
            chroot = f"/bench_{uuid.uuid4().hex[:8]}"
            admin.create(chroot)
            gen = KazooClient(f"{connect}{chroot}")
            gen.start(timeout=30)
            per_topic = max(1, partitions // args.topics)
            generate_sample_cluster(gen, SampleSpec.clean(
                topics=args.topics, partitions_per_topic=per_topic, window=32, batch_ops=500))
            reader = KazooClient(f"{connect}{chroot}")
            reader.start(timeout=30)
            session = session_for_client(reader)
            options = TranslationOptions()
            snap = read_cluster(session)
            image = apply_records(MetadataImage.EMPTY, [
                r for r in translate(snap, options).records if "TRANSACTION" not in r.type])
            states = sorted(f"/brokers/topics/{t}/partitions/{p}/state"
                            for (t, p) in snap.partition_states)
            totals = []
            for i in range(args.rounds):
                image, notified, records, parts = _round(gen, session, image, options, states,
                                                         args.changes, i)
                total = sum(parts) * 1000
                totals.append(total)
                print(f"{partitions:>7} partitions round {i}: {notified} notifications, "
                      f"{records} records; keys {parts[0] * 1000:.1f} ms, re-read "
                      f"{parts[1] * 1000:.1f} ms, diff {parts[2] * 1000:.1f} ms, apply "
                      f"{parts[3] * 1000:.1f} ms; step {total:.1f} ms")
            diffs = compare(expected_image(read_cluster(session, watch=False)), image)
            print(f"{partitions:>7} partitions: median step {statistics.median(totals):.1f} ms "
                  f"for {args.changes} changes; parity differences after all rounds: "
                  f"{len(diffs)}")
            reader.stop()
            reader.close()
            gen.stop()
            gen.close()
    finally:
        admin.stop()
        admin.close()
        if server is not None:
            server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
