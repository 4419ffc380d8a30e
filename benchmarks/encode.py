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
Ratios a/b and a'/b are printed (target >= 1.0). The two logs are compared byte for byte.
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
    encode_record,
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


def ours(records: Sequence[MetadataRecord], path: Path) -> tuple[dict[str, float], list[bytes],
                                                                   list[bytes]]:
    t0 = time.perf_counter()
    values = [encode_record(r) for r in records]
    t1 = time.perf_counter()
    batches = pack_batches(0, EPOCH, TIMESTAMP_MS, values)
    t2 = time.perf_counter()
    write_all(path, batches)
    t3 = time.perf_counter()
    return {"encode": t1 - t0, "pack": t2 - t1, "write": t3 - t2}, values, batches


def baseline(values: Sequence[bytes], boundaries: Sequence[tuple[int, int]],
             path: Path) -> tuple[dict[str, float], list[bytes]]:
    t0 = time.perf_counter()
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
    t1 = time.perf_counter()
    write_all(path, batches)
    t2 = time.perf_counter()
    return {"pack": t1 - t0, "write": t2 - t1}, batches


def segment_bytes(path: Path) -> bytes:
    segs = sorted((path / "__cluster_metadata-0").glob("*.log"))
    return b"".join(p.read_bytes() for p in segs)


def report(label: str, phases: dict[str, float], count: int, size: int) -> float:
    total = sum(phases.values())
    detail = ", ".join(f"{k} {v:.2f}s" for k, v in phases.items())
    print(f"{label:<38} {count / total:>12,.0f} records/s {size / total / 1e6:>8.1f} MB/s"
          f"   ({total:.2f}s: {detail})")
    return count / total


def best_of(rounds: int, run: Callable[[int], dict[str, float]]) -> dict[str, float]:
    best: dict[str, float] | None = None
    for r in range(rounds):
        phases = run(r)
        if best is None or sum(phases.values()) < sum(best.values()):
            best = phases
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

        def run_ours(r: int) -> dict[str, float]:
            phases, values, batches = ours(records, work / f"ours{r}")
            state["values"], state["batches"] = values, batches
            return phases

        ours_phases = best_of(args.rounds, run_ours)
        values, our_batches = state["values"], state["batches"]
        boundaries = []
        for raw in our_batches:
            h = read_batch_header(raw, 0)
            boundaries.append((h.base_offset, h.last_offset + 1))

        def run_framing(r: int) -> dict[str, float]:
            t0 = time.perf_counter()
            batches = pack_batches(0, EPOCH, TIMESTAMP_MS, values)
            t1 = time.perf_counter()
            write_all(work / f"frame{r}", batches)
            return {"pack": t1 - t0, "write": time.perf_counter() - t1}

        framing = best_of(args.rounds, run_framing)

        def run_base(r: int) -> dict[str, float]:
            phases, batches = baseline(values, boundaries, work / f"base{r}")
            state["base"] = batches
            return phases

        base = best_of(args.rounds, run_base)
        size = sum(len(b) for b in our_batches)
        print(f"{len(our_batches)} batches, {size / 1e6:.1f} MB of log, fsync per batch, "
              f"{os.cpu_count()} CPUs")
        a = report("(a)  zk2kraft encode+pack+write", ours_phases, len(records), size)
        a2 = report("(a') zk2kraft pack+write (pre-encoded)", framing, len(records), size)
        b = report("(b)  kafka-python pack+write", base, len(records), size)
        print(f"ratio a/b  = {a / b:.2f}x  (zk2kraft end to end vs baseline framing only)")
        print(f"ratio a'/b = {a2 / b:.2f}x  (like for like: framing and writing)")
        same = segment_bytes(work / "ours0") == segment_bytes(work / "base0")
        print(f"logs byte-identical: {same}")
        return 0 if same else 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
