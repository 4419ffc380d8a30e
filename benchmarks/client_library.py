"""Which Kafka client library runs the canary: confluent-kafka (librdkafka) against kafka-python,
measured on one real Kafka 3.9.1 node (KRaft, broker+controller). Prints figures; not a test.

    python benchmarks/client_library.py [--records 10000] [--requests 200]

The canary runs inside the `zk2kraft migrate` process, beside the drain whose few tens of
milliseconds are the tool's window, so what matters is how much of *our* process the client
takes (CPU, and the GIL: a pure-Python client encodes and decodes every request in Python) and
whether it has what the canary needs (IncrementalAlterConfigs, an idempotent acks=all producer).
Figures per library, in one process, one after the other:
  * controller requests: N sequential IncrementalAlterConfigs of a topic: latency p50/p99 and
    process CPU per request;
  * produce: N records, acks=all, idempotent, one in flight per 1 ms tick: wall time, process
    CPU per 1,000 records, and how late a 1 ms sleep in another Python thread wakes (p99), i.e.
    how much the client's threads hold the GIL.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.kafka import KafkaController, random_cluster_id, storage_format  # noqa: E402

TOPIC = "libbench"


def _p(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))]


class _Jitter:
    """A Python thread sleeping 1 ms in a loop; records how late it wakes (GIL contention)."""

    def __init__(self) -> None:
        self.late: list[float] = []
        self.stop = threading.Event()
        self.t = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self.stop.is_set():
            a = time.perf_counter()
            time.sleep(0.001)
            self.late.append((time.perf_counter() - a - 0.001) * 1000.0)

    def __enter__(self) -> _Jitter:
        self.t.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.t.join()


def confluent(bootstrap: str, records: int, requests: int) -> dict[str, float]:
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource

    admin = AdminClient({"bootstrap.servers": bootstrap})
    lat = []
    cpu0 = time.process_time()
    for i in range(requests):
        res = ConfigResource(ConfigResource.Type.TOPIC, TOPIC, incremental_configs=[
            ConfigEntry("retention.ms", str(86400000 + i),
                        incremental_operation=AlterConfigOpType.SET)])
        a = time.perf_counter()
        for f in admin.incremental_alter_configs([res]).values():
            f.result(30)
        lat.append((time.perf_counter() - a) * 1000.0)
    req_cpu = (time.process_time() - cpu0) / requests * 1000.0
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all",
                         "enable.idempotence": True, "linger.ms": 0})
    acked = [0]

    def done(err: object, msg: object) -> None:
        if err is None:
            acked[0] += 1

    with _Jitter() as jitter:
        cpu0, w0 = time.process_time(), time.perf_counter()
        for i in range(records):
            producer.produce(TOPIC, value=str(i).encode(), on_delivery=done)
            producer.poll(0.001)
        producer.flush(60)
        wall, cpu = time.perf_counter() - w0, time.process_time() - cpu0
    return {"req_p50_ms": statistics.median(lat), "req_p99_ms": _p(lat, 0.99),
            "req_cpu_ms": req_cpu, "produce_wall_s": wall, "cpu_ms_per_1000": cpu / records * 1e6,
            "acked": acked[0], "wake_p99_ms": _p(jitter.late, 0.99)}


def kafka_python(bootstrap: str, records: int, requests: int) -> dict[str, float]:
    from kafka import KafkaProducer
    from kafka.admin import ConfigResource, ConfigResourceType, KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    lat = []
    cpu0 = time.process_time()
    for i in range(requests):
        res = ConfigResource(ConfigResourceType.TOPIC, TOPIC,
                             configs={"retention.ms": str(86400000 + i)})
        a = time.perf_counter()
        admin.alter_configs([res])
        lat.append((time.perf_counter() - a) * 1000.0)
    req_cpu = (time.process_time() - cpu0) / requests * 1000.0
    admin.close()
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", enable_idempotence=True,
                             linger_ms=0)
    acked = [0]

    def done(_: object) -> None:
        acked[0] += 1

    with _Jitter() as jitter:
        cpu0, w0 = time.process_time(), time.perf_counter()
        for i in range(records):
            producer.send(TOPIC, value=str(i).encode()).add_callback(done)
            time.sleep(0.001)
        producer.flush(60)
        wall, cpu = time.perf_counter() - w0, time.process_time() - cpu0
    producer.close()
    return {"req_p50_ms": statistics.median(lat), "req_p99_ms": _p(lat, 0.99),
            "req_cpu_ms": req_cpu, "produce_wall_s": wall, "cpu_ms_per_1000": cpu / records * 1e6,
            "acked": acked[0], "wake_p99_ms": _p(jitter.late, 0.99)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--records", type=int, default=10000)
    p.add_argument("--requests", type=int, default=200)
    args = p.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="zk2kraft-bench-clients-"))
    node = KafkaController(work / "node", work / "meta", node_id=1, broker=True, heap="384m")
    storage_format(node.config_path, random_cluster_id())
    with node:
        from confluent_kafka.admin import AdminClient, NewTopic

        admin = AdminClient({"bootstrap.servers": node.bootstrap_servers})
        admin.create_topics([NewTopic(TOPIC, 1, 1)])[TOPIC].result(60)
        time.sleep(2)  # the new topic's leader
        with _Jitter() as idle:
            time.sleep(3)
        print(f"idle: a 1 ms sleep wakes p99 {_p(idle.late, 0.99):.2f} ms late")
        for name, fn in (("confluent-kafka", confluent), ("kafka-python", kafka_python)):
            r = fn(node.bootstrap_servers, args.records, args.requests)
            print(f"{name}: IncrementalAlterConfigs p50 {r['req_p50_ms']:.1f} ms, p99 "
                  f"{r['req_p99_ms']:.1f} ms, CPU {r['req_cpu_ms']:.2f} ms/request; produce "
                  f"{args.records} acks=all in {r['produce_wall_s']:.1f}s ({r['acked']:.0f} "
                  f"acked), CPU {r['cpu_ms_per_1000']:.0f} ms per 1,000 records; another "
                  f"thread's 1 ms sleep wakes p99 {r['wake_p99_ms']:.2f} ms late", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
