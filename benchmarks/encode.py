"""Encode benchmark: records/s and MB/s for encoding AND writing PartitionRecords into one voter's
`__cluster_metadata-0` log (fsync per batch of <= 8 MiB), against kafka-python's
`DefaultRecordBatchBuilder` packing the same value bytes. Prints figures; it is not a test.

    python benchmarks/encode.py                     # 1,000,000 PartitionRecords
    python benchmarks/encode.py --records 200000    # quicker

Figures:
  (a)  zk2kraft end to end: MetadataRecord objects -> `encode_record` (schema-driven codec) ->
       `pack_batches` (v2 batches, CRC-32C, <= 8 MiB / <= 10,000 records) -> `VoterDir.append`
       (write + fsync per batch);
  (a') zk2kraft framing and writing only, from the already encoded values (like for like with b);
  (b)  baseline: kafka-python's pure-Python v2 builder given the same value bytes (encoded by (a),
       not timed), the same batch boundaries, offsets and epoch patched in, written the same way.
Ratios a/b and a'/b are printed (target >= 1.0), by wall time and by this process's CPU time
(on a shared machine the latter is the fairer one). The two logs are compared byte for byte.
Record objects are built before timing (they are the translator's output, not the writer's work).
"""

from __future__ import annotations

import argparse
import os
import shutil
import struct
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from writers import (  # noqa: E402
    EncodedBatch,
    MetadataRecord,
    VoterDir,
    encode_records,
    pack_batches,
    read_batch_header,
    uuid_from_bytes,
)

with warnings.catch_warnings():  # kafka-python's package import uses deprecated importlib APIs
    warnings.simplefilter("ignore", DeprecationWarning)
    from kafka.record.default_records import DefaultRecordBatchBuilder

CLUSTER_ID = "bench-cluster-000000000"
EPOCH = 1
TIMESTAMP_MS = 1_700_000_000_000
PARTITIONS_PER_TOPIC = 100


def build_records(count: int) -> list[MetadataRecord]:
    """PartitionRecord v0 (what the ZK migration writes) for count/100 topics of 100 partitions,
    replication factor 3 over 12 brokers."""
    records = []
    replica_sets = [[b % 12 + 1, (b + 1) % 12 + 1, (b + 2) % 12 + 1] for b in range(12)]
    for i in range(count):
        topic, partition = divmod(i, PARTITIONS_PER_TOPIC)
        replicas = replica_sets[i % 12]
        records.append(MetadataRecord("PARTITION_RECORD", 0, {
            "partitionId": partition,
            "topicId": uuid_from_bytes(topic.to_bytes(16, "big") or b"\x00" * 16),
            "replicas": replicas,
            "isr": replicas,
            "removingReplicas": [],
            "addingReplicas": [],
            "leader": replicas[0],
            "leaderEpoch": partition % 7,
            "partitionEpoch": partition % 5,
        }))
    return records


def write_all(path: Path, batches: Sequence[bytes]) -> None:
    """Append every batch to a fresh voter directory, fsync per batch."""
    with VoterDir(path, node_id=1, cluster_id=CLUSTER_ID) as voter:
        for raw in batches:
            header = read_batch_header(raw, 0)
            voter.append(EncodedBatch(header.base_offset, header.last_offset, EPOCH, raw))


class Clock:
    """Wall time (perf_counter) and this process's CPU time (process_time) side by side: the
    machine may be shared, and CPU time is what load on other processes distorts least."""

    def __init__(self) -> None:
        self.wall: dict[str, float] = {}
        self.cpu: dict[str, float] = {}
        self._last = (time.perf_counter(), time.process_time())

    def lap(self, name: str) -> None:
        now = (time.perf_counter(), time.process_time())
        self.wall[name] = now[0] - self._last[0]
        self.cpu[name] = now[1] - self._last[1]
        self._last = now


def ours(records: Sequence[MetadataRecord], path: Path) -> tuple[Clock, list[bytes],
                                                                 list[bytes]]:
    clock = Clock()
    values = encode_records(records)
    clock.lap("encode")
    batches = pack_batches(0, EPOCH, TIMESTAMP_MS, values)
    clock.lap("pack")
    write_all(path, batches)
    clock.lap("write")
    return clock, values, batches


def baseline(values: Sequence[bytes], boundaries: Sequence[tuple[int, int]],
             path: Path) -> tuple[Clock, list[bytes]]:
    clock = Clock()
    batches = []
    for start, stop in boundaries:
        builder = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=0,
                                            producer_id=-1, producer_epoch=-1,
                                            base_sequence=-1, batch_size=1 << 30)
        for i in range(stop - start):
            builder.append(i, timestamp=TIMESTAMP_MS, key=None, value=values[start + i],
                           headers=[])
        raw = builder.build()
        struct.pack_into(">q", raw, 0, start)  # kafka-python writes base offset 0 (produce)
        struct.pack_into(">i", raw, 12, EPOCH)  # and no leader epoch; neither is CRC'd
        batches.append(bytes(raw))
    clock.lap("pack")
    write_all(path, batches)
    clock.lap("write")
    return clock, batches


def segment_bytes(path: Path) -> bytes:
    segs = sorted((path / "__cluster_metadata-0").glob("*.log"))
    return b"".join(p.read_bytes() for p in segs)


def report(label: str, clock: Clock, count: int, size: int) -> tuple[float, float]:
    wall, cpu = sum(clock.wall.values()), sum(clock.cpu.values())
    detail = ", ".join(f"{k} {v:.2f}s" for k, v in clock.wall.items())
    print(f"{label:<38} {count / wall:>10,.0f} rec/s {size / wall / 1e6:>6.1f} MB/s wall"
          f" | {count / cpu:>10,.0f} rec/s {size / cpu / 1e6:>6.1f} MB/s cpu   ({detail})")
    return count / wall, count / cpu


def best_of(rounds: int, run: Callable[[int], Clock]) -> Clock:
    best: Clock | None = None
    for r in range(rounds):
        clock = run(r)
        if best is None or sum(clock.cpu.values()) < sum(best.cpu.values()):
            best = clock
    assert best is not None
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=1, help="best of N runs of each side")
    parser.add_argument("--dir", type=Path, default=None, help="where to write (default: tmp)")
    args = parser.parse_args()

    t = time.perf_counter()
    records = build_records(args.records)
    print(f"built {len(records):,} PartitionRecord objects in {time.perf_counter() - t:.1f}s "
          "(not timed below)")
    work = Path(tempfile.mkdtemp(prefix="zk2kraft-encode-", dir=args.dir))
    try:
        state: dict[str, list[bytes]] = {}

        def run_ours(r: int) -> Clock:
            clock, values, batches = ours(records, work / f"ours{r}")
            state["values"], state["batches"] = values, batches
            return clock

        ours_clock = best_of(args.rounds, run_ours)
        values, our_batches = state["values"], state["batches"]
        boundaries = []
        for raw in our_batches:
            h = read_batch_header(raw, 0)
            boundaries.append((h.base_offset, h.last_offset + 1))

        def run_framing(r: int) -> Clock:
            clock = Clock()
            batches = pack_batches(0, EPOCH, TIMESTAMP_MS, values)
            clock.lap("pack")
            write_all(work / f"frame{r}", batches)
            clock.lap("write")
            return clock

        framing = best_of(args.rounds, run_framing)

        def run_base(r: int) -> Clock:
            clock, batches = baseline(values, boundaries, work / f"base{r}")
            state["base"] = batches
            return clock

        base = best_of(args.rounds, run_base)
        size = sum(len(b) for b in our_batches)
        print(f"{len(our_batches)} batches, {size / 1e6:.1f} MB of log, fsync per batch, "
              f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
        a = report("(a)  zk2kraft encode+pack+write", ours_clock, len(records), size)
        a2 = report("(a') zk2kraft pack+write (pre-encoded)", framing, len(records), size)
        b = report("(b)  kafka-python pack+write", base, len(records), size)
        print(f"ratio a/b  = {a[0] / b[0]:.2f}x wall, {a[1] / b[1]:.2f}x cpu"
              "  (zk2kraft end to end vs baseline framing only)")
        print(f"ratio a'/b = {a2[0] / b[0]:.2f}x wall, {a2[1] / b[1]:.2f}x cpu"
              "  (like for like: framing and writing)")
        same = segment_bytes(work / "ours0") == segment_bytes(work / "base0")
        print(f"logs byte-identical: {same}")
        return 0 if same else 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
