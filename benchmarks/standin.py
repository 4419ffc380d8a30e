"""Stand-in leader benchmark: real Kafka 3.9.1 controllers follow zk2kraft's stand-in voter 3000.
Prints figures; it is not a test.

    python benchmarks/standin.py                      # 220,000 PartitionRecords, 200 commits
    python benchmarks/standin.py --records 50000 --commits 50

Figures (from real runs of two controllers 3001 and 3002 and the stand-in, on loopback):
  * election: stand-in start -> epoch 1 won (includes the controllers' JVM start);
  * encoding: records -> batches (zk2kraft's codec), timed apart;
  * replication: records/s and MB/s from the first append until the last record is committed
    (the high watermark passed it: fsync'd by the stand-in and by at least one controller, which
    flushes before its next Fetch), in appends of about `--chunk` records;
  * commit latency: one small batch (one record) appended and committed, repeated `--commits`
    times: p50 / p90 / p99 / max;
  * handover: EndQuorumEpoch sent -> the new leader's BeginQuorumEpoch reaches the stand-in;
    and EndQuorumEpoch -> the new leader logs that it became the active controller (its own
    log line's timestamp, millisecond resolution).
"""

from __future__ import annotations

import argparse
import base64
import contextlib
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

from tests.support.kafka import SERVER_LOG4J  # noqa: E402
from tests.support.standin import standin_quorum  # noqa: E402
from writers import EncodedBatch, MetadataRecord, batch_records  # noqa: E402

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
    ap.add_argument("--keep", type=Path, help="work in this directory and keep the logs")
    args = ap.parse_args()

    records = _records(args.records)
    print(f"load average before start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs "
          "(the machine is shared: figures move with it)")
    with contextlib.ExitStack() as stack:
        if args.keep is not None:
            args.keep.mkdir(parents=True, exist_ok=True)
            tmp = str(args.keep)
        else:
            tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="zk2kraft-bench-"))
        # Kafka's controllers log one INFO line per replayed PartitionRecord; at 220k records
        # that logging, not Raft, dominates their CPU on a small host, so it is turned down
        quiet = Path(tmp) / "log4j-quiet.properties"
        quiet.write_text(SERVER_LOG4J.read_text() + "\n"
                         "log4j.logger.org.apache.kafka.controller.ReplicationControlManager=WARN\n")
        t0 = time.monotonic()
        with standin_quorum(Path(tmp), log4j=quiet) as q:
            s = q.standin
            print(f"election: epoch {s.leader_epoch} won and both controllers following "
                  f"{time.monotonic() - t0:.1f} s after start (JVM start included)")

            start_offset = s.next_offset
            t = time.monotonic()
            pairs = batch_records(records, base_offset=start_offset, leader_epoch=s.leader_epoch,
                                  timestamp_ms=int(time.time() * 1000))
            batches = [EncodedBatch(b.base_offset, b.last_offset, b.leader_epoch, d)
                       for b, d in pairs]
            encode_s = time.monotonic() - t
            size = sum(len(b.data) for b in batches)
            t = time.monotonic()
            per_call = max(1, len(batches) * args.chunk // max(1, len(records)))
            for i in range(0, len(batches), per_call):
                s.append_batches(batches[i:i + per_call])
            elapsed = time.monotonic() - t
            print(f"encoding: {len(records):,} records into {len(batches)} batches "
                  f"({size / 1e6:.1f} MB) in {encode_s:.2f} s (not part of replication)")
            print(f"replication: offsets {start_offset}..{s.last_offset} appended, fsync'd by the "
                  f"stand-in and committed by the quorum in {elapsed:.2f} s = "
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
