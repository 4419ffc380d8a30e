"""Does Kafka log the controller-registration NotControllerException on a log Kafka wrote itself?

Evidence for docs/design/offline.md ("quorum-state names no leader"), not a test. A KRaft quorum of
real Kafka (3 controllers, 1 broker, formatted by Kafka's own `kafka-storage format`) is filled
through the Admin API (`--topics` topics of `--partitions` partitions), stopped cleanly, and the
controllers are started again on the log Kafka wrote, `--restarts` times. After each start the
script counts, per controller, what the offline rehearsal lets through by name: the controller's
`registerController: event failed with NotControllerException` and `ControllerApis`'s ERROR
`Unexpected error handling request ... CONTROLLER_REGISTRATION`.

    python benchmarks/kraft_restart_race.py                  # Kafka 3.9.1
    python benchmarks/kraft_restart_race.py --kafka 4.1 --restarts 5
    python benchmarks/kraft_restart_race.py --kafka 4.1 --log zk2kraft --event-times

`--log zk2kraft` starts the controllers (no broker) on a log `zk2kraft migrate --offline` wrote
from a generated ZooKeeper tree of the same shape instead. `--event-times` (Kafka 4.x) sets
`controller.performance.always.log.threshold.ms=0`, so Kafka's EventPerformanceMonitor logs
every controller event with its duration, and prints the slowest replay events
(`handleCommit`, `handleLoadSnapshot`) and the slowest event of any kind per start: whether
replaying the log is what a loaded host makes exceed the default 2 s.

Why it can happen on any log (Kafka 3.9 source): the Raft client tells the QuorumController it
leads only once that listener has replayed the log past the new epoch's start offset
(`KafkaRaftClient.ListenerContext.maybeFireLeaderChange(leader, epochStartOffset)`), while the
MetadataLoader, a second listener, publishes as soon as it reaches the high watermark; the
ControllerRegistrationManager, one of its publishers, then sends the registration to the Raft
leader, whose QuorumController may still be replaying.
"""

from __future__ import annotations

import argparse
import base64
import json
import sys
import tempfile
import time
import uuid
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.kraft import KAFKA_39, KAFKA_41, KraftNode, run_tool  # noqa: E402
from tests.support.ports import free_port  # noqa: E402

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from kafka.admin import KafkaAdminClient, NewTopic  # noqa: E402

CONTROLLERS = (3000, 3001, 3002)
SLOW_MS = 2000.0  # controller.performance.always.log.threshold.ms's default
BROKER = 1


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--kafka", choices=("3.9", "4.1"), default="3.9")
    p.add_argument("--topics", type=int, default=10)
    p.add_argument("--partitions", type=int, default=12)
    p.add_argument("--restarts", type=int, default=3)
    p.add_argument("--log", choices=("kafka", "zk2kraft"), default="kafka")
    p.add_argument("--event-times", action="store_true")
    return p


def _event_times(text: str) -> dict[str, object]:
    events = _events(text)
    replay = sorted((e for e in events if e[1].startswith(("handleCommit", "handleLoadSnapshot"))),
                    reverse=True)
    return {"events": len(events), "slowest replay events (ms)": replay[:3],
            "slowest events (ms)": sorted(events, reverse=True)[:3]}


def _zk2kraft_log(root: Path, cluster_topics: int, partitions: int, kafka: str) -> None:
    """The controllers' dirs as `zk2kraft migrate --offline` writes them, from a generated tree
    whose brokers have stopped (their ephemeral znodes went with the generating session)."""
    import subprocess

    from kazoo.client import KazooClient

    from samples import SampleSpec, generate_sample_cluster
    from tests.support.zk import ZkServer

    server = ZkServer(heap="256m").start()
    try:
        client = KazooClient(hosts=server.connect, timeout=60)
        client.start(timeout=60)
        generate_sample_cluster(client, SampleSpec.clean(topics=cluster_topics,
                                                         partitions_per_topic=partitions))
        client.stop()
        client.close()
        target = ["--target-kafka", "4.1"] if kafka == "4.1" else []
        proc = subprocess.run(
            [sys.executable, "-m", "migrate.cli", "migrate", "--zookeeper", server.connect,
             "--offline", *target, "--quiet", "--spark-master", "in-process",
             *(f"--voter={c}={root / f'meta{c}'}" for c in CONTROLLERS)],
            capture_output=True, text=True, timeout=600, check=False)
        if proc.returncode != 0:
            raise SystemExit(f"zk2kraft migrate exited {proc.returncode}: {proc.stderr[-2000:]}")
    finally:
        server.stop()


def _race(text: str) -> dict[str, object]:
    example = next((ln[:300] for ln in text.splitlines()
                    if "] ERROR " in ln and "apiKey=CONTROLLER_REGISTRATION" in ln), None)
    return {
        "example": example,
        "registerController NotControllerException":
            text.count("registerController: event failed with NotControllerException"),
        "ControllerApis ERROR CONTROLLER_REGISTRATION": sum(
            1 for ln in text.splitlines()
            if "] ERROR " in ln and "apiKey=CONTROLLER_REGISTRATION" in ln),
        "events over 2 s (Kafka 4.x's default threshold)": [
            f"{name} {ms:.0f} ms" for ms, name in _events(text) if ms >= SLOW_MS],
    }


def _events(text: str) -> list[tuple[float, str]]:
    """(duration ms, event name) of each event Kafka 4.x's EventPerformanceMonitor logged."""
    marker = "Exceptionally slow controller event "
    out = []
    for ln in text.splitlines():
        if marker in ln:
            name, _, rest = ln.split(marker)[1].partition(" took ")
            out.append((float(rest.split(" ms")[0]), name))
    return out


def main() -> int:
    args = _parser().parse_args()
    dist = KAFKA_41 if args.kafka == "4.1" else KAFKA_39
    cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
    storage = "kafka.tools.StorageTool"
    results: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory(prefix="kraft-restart-race-") as tmp:
        root = Path(tmp)
        quorum = {c: free_port() for c in CONTROLLERS}

        # Kafka's own default (2000) unless --event-times: the tests' KAFKA_41 raises it
        extra = ({"controller.performance.always.log.threshold.ms":
                  "0" if args.event_times else "2000"} if args.kafka == "4.1" else {})

        def nodes(run: int) -> list[KraftNode]:
            made = [KraftNode(root / f"run{run}" / f"c{c}", dist, node_id=c, role="controller",
                              quorum=quorum, log_dirs=root / f"meta{c}", extra=extra)
                    for c in CONTROLLERS]
            if args.log == "zk2kraft":
                return made
            made.append(KraftNode(root / f"run{run}" / "b1", dist, node_id=BROKER, role="broker",
                                  quorum=quorum, log_dirs=root / "data1",
                                  extra={"offsets.topic.replication.factor": "1",
                                         "transaction.state.log.replication.factor": "1",
                                         "transaction.state.log.min.isr": "1"}))
            return made

        first = nodes(0)
        if args.log == "zk2kraft":
            _zk2kraft_log(root, args.topics, args.partitions, args.kafka)
        else:
            for node in first:
                run_tool(dist, storage, "format", f"--cluster-id={cluster_id}", "-c",
                         str(node.config_path))
        for run in range(args.restarts + 1):
            group = first if run == 0 else nodes(run)
            started = time.monotonic()
            try:
                for node in group:
                    node.launch()
                for node in group:
                    node.wait_started()
                if run == 0 and args.log == "kafka":
                    admin = KafkaAdminClient(bootstrap_servers=group[-1].bootstrap_servers,
                                             request_timeout_ms=120_000)
                    try:
                        admin.create_topics([NewTopic(f"t{i}", args.partitions, 1)
                                             for i in range(args.topics)], timeout_ms=120_000)
                    finally:
                        admin.close()
                    time.sleep(5)  # let the creations commit on every voter
            finally:
                for node in reversed(group):
                    node.stop(timeout=60)
            counts: dict[int, dict[str, object]] = {
                c.node_id: _race(c.log_text()) for c in group[:3]}
            if args.event_times:
                for c in group[:3]:
                    counts[c.node_id]["event times"] = _event_times(c.log_text())
            first_start = "first (empty log)" if args.log == "kafka" else "first (zk2kraft's log)"
            results.append({"start": first_start if run == 0 else f"restart {run}",
                            "seconds": round(time.monotonic() - started, 1),
                            "controllers": counts})
            print(json.dumps(results[-1]), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
