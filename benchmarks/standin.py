"""Stand-in leader benchmark: real Kafka 3.9.1 controllers follow zk2kraft's stand-in voter 3000.
Prints figures; it is not a test.

    python benchmarks/standin.py                      # 220,000 PartitionRecords, 200 commits
    python benchmarks/standin.py --records 50000 --commits 50

Figures (from real runs of two controllers 3001 and 3002 and the stand-in, on loopback):
  * election: stand-in start -> epoch 1 won (includes the controllers' JVM start);
  * replication: records/s and MB/s from the first append until the last record is committed
    (the high watermark passed it: fsync'd by the stand-in and by at least one controller, which
    flushes before its next Fetch), in appends of `--chunk` records;
  * commit latency: one small batch (one record) appended and committed, repeated `--commits`
    times: p50 / p90 / p99 / max;
  * handover: EndQuorumEpoch sent -> the new leader's BeginQuorumEpoch reaches the stand-in;
    and EndQuorumEpoch -> the new leader logs that it became the active controller (its own
    log line's timestamp, millisecond resolution).
"""

from __future__ import annotations

import argparse
import base64
import os
import re
import statistics
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.standin import standin_quorum  # noqa: E402
from writers import MetadataRecord  # noqa: E402

_ACTIVE = re.compile(r"\[(?P<ts>[0-9-]+ [0-9:,]+)\] INFO [^\n]*Becoming the active controller")


def _topic_id(i: int) -> str:
    return base64.urlsafe_b64encode(i.to_bytes(16, "big")).decode()[:22]


def _records(n: int) -> list[MetadataRecord]:
    """metadata.version first, then topics of 100 partitions on brokers 1-3 (migrated shape)."""
    out = [MetadataRecord("FEATURE_LEVEL_RECORD", 0,
                          {"name": "metadata.version", "featureLevel": 21})]
    t = 0
    while len(out) < n:
        t += 1
        tid = _topic_id(t)
        out.append(MetadataRecord("TOPIC_RECORD", 0, {"name": f"topic-{t}", "topicId": tid}))
        for p in range(min(100, n - len(out))):
            out.append(MetadataRecord("PARTITION_RECORD", 0, {
                "partitionId": p, "topicId": tid, "replicas": [1, 2, 3], "isr": [1, 2, 3],
                "removingReplicas": [], "addingReplicas": [], "leader": 1 + p % 3,
                "leaderEpoch": 0, "partitionEpoch": 0}))
    return out


def _pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=int, default=220_000)
    ap.add_argument("--chunk", type=int, default=20_000, help="records per append call")
    ap.add_argument("--commits", type=int, default=200)
    args = ap.parse_args()

    records = _records(args.records)
    print(f"load average before start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs "
          "(the machine is shared: figures move with it)")
    with tempfile.TemporaryDirectory(prefix="zk2kraft-bench-standin-") as tmp:
        t0 = time.monotonic()
        with standin_quorum(Path(tmp)) as q:
            s = q.standin
            print(f"election: epoch {s.leader_epoch} won and both controllers following "
                  f"{time.monotonic() - t0:.1f} s after start (JVM start included)")

            start_offset = s.next_offset
            t = time.monotonic()
            for i in range(0, len(records), args.chunk):
                s.append_records(records[i:i + args.chunk], timestamp_ms=int(time.time() * 1000))
            elapsed = time.monotonic() - t
            size = sum(b.data.__len__() for b in s._index.batches)  # noqa: SLF001 - bench only
            print(f"replication: {len(records):,} records (offsets {start_offset}.."
                  f"{s.last_offset}, {size / 1e6:.1f} MB of log) committed in {elapsed:.2f} s = "
                  f"{len(records) / elapsed:,.0f} records/s, {size / 1e6 / elapsed:.1f} MB/s")

            lat = []
            for _ in range(args.commits):
                rec = MetadataRecord("NO_OP_RECORD", 0, {})
                t = time.monotonic()
                s.append_records([rec], timestamp_ms=int(time.time() * 1000))
                lat.append((time.monotonic() - t) * 1000)
            print(f"commit latency (1 record, {args.commits} commits): "
                  f"p50 {_pct(lat, .5):.1f} ms, p90 {_pct(lat, .9):.1f} ms, "
                  f"p99 {_pct(lat, .99):.1f} ms, max {max(lat):.1f} ms, "
                  f"mean {statistics.fmean(lat):.1f} ms")

            end_sent = datetime.now()
            h = s.resign()
            leader = q.controller(h.new_leader) if h.new_leader > 0 else None
            print(f"handover: EndQuorumEpoch -> {h.new_leader} leads epoch {h.new_epoch} "
                  f"(its BeginQuorumEpoch reached the stand-in) in {h.elapsed_ms:.1f} ms")
            if leader is not None:
                m = leader.wait_for_log(_ACTIVE.pattern, 60)
                active = datetime.strptime(m.group("ts"), "%Y-%m-%d %H:%M:%S,%f")
                print(f"handover: EndQuorumEpoch -> {h.new_leader} logged 'Becoming the active "
                      f"controller' in {(active - end_sent).total_seconds() * 1000:.0f} ms "
                      "(log4j timestamp, millisecond resolution)")
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
