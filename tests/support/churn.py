"""A background writer that changes a Kafka tree in ZooKeeper the way a live cluster does.

`Churn(connect, rate=200)` runs a thread that makes `rate` changes per second, cycling through
every kind the migration mirrors: ISR/leader changes, topic creation and deletion, partition
additions, topic config set and delete, client quotas, SCRAM credentials, ACLs, a broker joining
and leaving, and the producer-id block. Every write is a multi-op that first checks
`/controller_epoch` at the version it had when the churn started, exactly as Kafka's ZooKeeper
controller guards its writes: once zk2kraft fences ZooKeeper, every further write fails, the
churn records that it was fenced and stops. So "what ZooKeeper holds at the end" is exactly what
the drain must have copied.

Ephemeral brokers belong to the churn's session; keep the `with` block open until `verify` has
run, or closing the session would change the tree after the cutover.

The demo (scripts/demo.sh) runs it as a process, from the repository's root::

    python -m tests.support.churn --zookeeper 127.0.0.1:2181/kafka [--rate 100] [--ready-file F]

It writes until fenced, then keeps its session (and so its brokers) until SIGTERM/SIGINT, and
prints what it did; `--ready-file` is written once the first 50 changes are in.
"""

from __future__ import annotations

import argparse
import base64
import json
import signal
import sys
import threading
import time
import uuid
from collections import Counter
from pathlib import Path
from types import FrameType
from typing import Any

from kazoo.client import KazooClient
from kazoo.exceptions import BadVersionError

from samples._cluster import scram_credential

__all__ = ["Churn"]


def _j(value: object) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


def _topic_id() -> str:
    while True:
        raw = uuid.uuid4().bytes
        text = base64.urlsafe_b64encode(raw).decode().rstrip("=")
        if not text.startswith("-"):
            return text


def _broker(broker_id: int) -> bytes:
    host = f"churn-{broker_id}.kafka.local"
    return _j({"version": 5, "host": host, "port": 9092, "jmx_port": -1,
               "timestamp": "1700000000000", "endpoints": [f"PLAINTEXT://{host}:9092"],
               "rack": "r1", "listener_security_protocol_map": {"PLAINTEXT": "PLAINTEXT"},
               "features": {"metadata.version": {"min_version": 1, "max_version": 21}}})


class Churn:
    """See the module docstring. Attributes after `stop()`: `counts` per kind, `errors`."""

    ALL_KINDS = frozenset({"isr", "topic_create", "topic_delete", "partition_add", "config_set",
                           "config_delete", "quota", "scram", "acl", "broker_join",
                           "broker_leave", "producer_id_block"})

    def __init__(self, connect: str, *, rate: float = 200.0, seed: int = 7,
                 static_partitions: int = 300) -> None:
        self.connect = connect
        self.rate = rate
        self.seed = seed
        self.static_partitions = static_partitions
        self.client = KazooClient(hosts=connect, timeout=15.0)
        self.counts: Counter[str] = Counter()
        self.errors: list[str] = []
        self.fenced = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="churn", daemon=True)
        self._n = 0
        self._topics: list[str] = []  # churn topics alive, oldest first
        self._partitions: dict[str, int] = {}
        self._ids: dict[str, str] = {}
        self._brokers: list[int] = []
        self._pid = 10_000
        self.started_at = 0.0
        self.ended_at: float | None = None
        self.changes = 0
        self._states: dict[str, tuple[dict[str, Any], int]] = {}  # state path -> (json, version)
        self._replicas: dict[tuple[str, int], list[int]] = {}
        self._bodies: dict[str, dict[str, Any]] = {}
        self._present: dict[str, bool] = {}
        self._inflight: list[tuple[str, Any]] = []
        self.max_in_flight = 16

    # -- lifecycle -----------------------------------------------------------------------------
    def __enter__(self) -> Churn:
        self.client.start(timeout=15)
        data, stat = self.client.get("/controller_epoch")
        self.epoch_version = stat.version
        self.static = []
        for t in sorted(self.client.get_children("/brokers/topics")):
            if len(self.static) >= self.static_partitions:
                break
            if t.startswith("churn-"):
                continue
            parts = self.client.get_children(f"/brokers/topics/{t}/partitions")
            body = json.loads(self.client.get(f"/brokers/topics/{t}")[0])
            for p in parts:
                path = f"/brokers/topics/{t}/partitions/{p}/state"
                if self.client.exists(path) is None:
                    continue
                data, st = self.client.get(path)
                self._states[path] = (json.loads(data), st.version)
                self._replicas[(t, int(p))] = body["partitions"][p]
                self.static.append((t, int(p)))
        self.started_at = time.monotonic()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
        self.client.stop()
        self.client.close()

    def stop(self) -> None:
        """Stop writing (the session and its ephemeral brokers stay until `__exit__`)."""
        self._stop.set()
        self._thread.join(timeout=30)

    def wait_changes(self, n: int, timeout: float = 60.0) -> None:
        """Block until at least `n` changes were made."""
        deadline = time.monotonic() + timeout
        while self.changes < n and time.monotonic() < deadline:
            time.sleep(0.01)

    def kinds_done(self) -> frozenset[str]:
        """Every kind made at least once."""
        return frozenset(k for k, v in self.counts.items() if v)

    def client_for_checks(self) -> KazooClient:
        """The churn's own client (for reading the tree in assertions)."""
        return self.client

    @property
    def achieved_rate(self) -> float:
        """Changes per second actually made while the writer ran."""
        end = self.ended_at if self.ended_at is not None else time.monotonic()
        return self.changes / max(1e-9, end - self.started_at)

    # -- the writer ----------------------------------------------------------------------------
    def _commit(self, kind: str, ops: list[tuple[str, tuple[Any, ...], dict[str, Any]]]) -> bool:
        """Send one guarded multi-op without waiting (ZooKeeper applies a session's requests
        in order, so later ops may depend on earlier ones); results are checked as they come
        back. Returns False once fenced."""
        if self.fenced.is_set():
            return False
        tx = self.client.transaction()
        tx.check("/controller_epoch", self.epoch_version)
        for name, args, kwargs in ops:
            getattr(tx, name)(*args, **kwargs)
        self._inflight.append((kind, tx.commit_async()))
        self._reap(block_until=self.max_in_flight)
        return not self.fenced.is_set()

    def _reap(self, *, block_until: int) -> None:
        while self._inflight and (self._inflight[0][1].ready()
                                  or len(self._inflight) > block_until):
            kind, result = self._inflight.pop(0)
            try:
                results = result.get(timeout=30)
            except Exception as exc:  # noqa: BLE001 - reported, the test asserts none
                self.errors.append(f"{kind}: {exc!r}")
                continue
            if isinstance(results[0], BadVersionError):
                self.fenced.set()
                continue
            bad = [r for r in results if isinstance(r, Exception)]
            if bad:
                if not self.fenced.is_set():
                    self.errors.append(f"{kind}: {bad[0]!r}")
                continue
            self.counts[kind] += 1
            self.changes += 1

    def _run(self) -> None:
        plan = ["isr", "topic_create", "config_set", "partition_add", "quota", "isr", "scram",
                "acl", "broker_join", "config_delete", "isr", "producer_id_block",
                "broker_leave", "topic_delete", "quota", "scram", "acl", "isr"]
        interval = 1.0 / self.rate
        next_at = time.monotonic()
        i = 0
        while not self._stop.is_set() and not self.fenced.is_set():
            kind = plan[i % len(plan)]
            i += 1
            try:
                getattr(self, f"_{kind}")()
            except Exception as exc:  # noqa: BLE001 - reported, the test asserts none
                self.errors.append(f"{kind}: {exc!r}")
            next_at += interval
            delay = next_at - time.monotonic()
            if delay > 0:
                time.sleep(delay)
        self._reap(block_until=0)
        self.ended_at = time.monotonic()

    def _isr(self) -> None:
        self._n += 1
        pool = self.static + [(t, p) for t in self._topics for p in range(self._partitions[t])]
        topic, p = pool[self._n % len(pool)]
        path = f"/brokers/topics/{topic}/partitions/{p}/state"
        state, version = self._states[path]
        isr = state["isr"]
        if self._n % 2 and len(isr) > 1:
            isr = isr[:-1]
        else:
            isr = list(self._replicas[(topic, p)])
        leader = isr[self._n % len(isr)]
        new = {**state, "isr": isr, "leader": leader, "leader_epoch": state["leader_epoch"] + 1}
        if self._commit("isr", [("set_data", (path, _j(new)), {"version": version})]):
            self._states[path] = (new, version + 1)

    def _topic_create(self) -> None:
        self._n += 1
        name = f"churn-{self.seed}-{self._n}"
        tid = _topic_id()
        assignment = {"0": [1, 2], "1": [2, 3]}
        ops: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = [
            ("create", (f"/config/topics/{name}", _j({"version": 1, "config": {}})), {}),
            ("create", (f"/brokers/topics/{name}", _j({
                "version": 3, "topic_id": tid, "partitions": assignment,
                "adding_replicas": {}, "removing_replicas": {}})), {}),
            ("create", (f"/brokers/topics/{name}/partitions", b""), {}),
        ]
        for p, reps in assignment.items():
            ops.append(("create", (f"/brokers/topics/{name}/partitions/{p}", b""), {}))
            ops.append(("create", (f"/brokers/topics/{name}/partitions/{p}/state", _j({
                "version": 1, "leader": reps[0], "leader_epoch": 0, "controller_epoch": 3,
                "isr": reps})), {}))
        if self._commit("topic_create", ops):
            self._topics.append(name)
            self._partitions[name] = 2
            self._ids[name] = tid
            self._bodies[name] = {"version": 3, "topic_id": tid, "partitions": assignment,
                                  "adding_replicas": {}, "removing_replicas": {}}
            for p, reps in assignment.items():
                self._states[f"/brokers/topics/{name}/partitions/{p}/state"] = (
                    {"version": 1, "leader": reps[0], "leader_epoch": 0,
                     "controller_epoch": 3, "isr": reps}, 0)
                self._replicas[(name, int(p))] = reps

    def _topic_delete(self) -> None:
        if len(self._topics) < 3:
            return
        name = self._topics.pop(0)
        parts = self._partitions.pop(name)
        # kafka-topics --delete, then the controller's deletion, as one change each
        if not self._commit("topic_delete_mark",
                            [("create", (f"/admin/delete_topics/{name}", b""), {})]):
            return
        ops: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []
        for p in range(parts):
            ops.append(("delete", (f"/brokers/topics/{name}/partitions/{p}/state",), {}))
            ops.append(("delete", (f"/brokers/topics/{name}/partitions/{p}",), {}))
        ops += [("delete", (f"/brokers/topics/{name}/partitions",), {}),
                ("delete", (f"/brokers/topics/{name}",), {}),
                ("delete", (f"/config/topics/{name}",), {}),
                ("delete", (f"/admin/delete_topics/{name}",), {})]
        self._commit("topic_delete", ops)

    def _partition_add(self) -> None:
        if not self._topics:
            return
        name = self._topics[-1]
        n = self._partitions[name]
        if n >= 4:
            return
        body = json.loads(json.dumps(self._bodies[name]))
        body["partitions"][str(n)] = [3, 1]
        ops: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = [
            ("set_data", (f"/brokers/topics/{name}", _j(body)), {}),
            ("create", (f"/brokers/topics/{name}/partitions/{n}", b""), {}),
            ("create", (f"/brokers/topics/{name}/partitions/{n}/state", _j({
                "version": 1, "leader": 3, "leader_epoch": 0, "controller_epoch": 3,
                "isr": [3, 1]})), {}),
        ]
        if self._commit("partition_add", ops):
            self._partitions[name] = n + 1
            self._bodies[name] = body
            self._states[f"/brokers/topics/{name}/partitions/{n}/state"] = (
                {"version": 1, "leader": 3, "leader_epoch": 0, "controller_epoch": 3,
                 "isr": [3, 1]}, 0)
            self._replicas[(name, n)] = [3, 1]

    def _config(self, kind: str, present: bool) -> None:
        if not self._topics:
            return
        self._n += 1
        name = self._topics[self._n % len(self._topics)]
        config = {"retention.ms": str(60_000 + self._n)} if present else {}
        self._commit(kind, [("set_data", (f"/config/topics/{name}",
                                          _j({"version": 1, "config": config})), {})])

    def _config_set(self) -> None:
        self._config("config_set", True)

    def _config_delete(self) -> None:
        self._config("config_delete", False)

    def _toggle(self, kind: str, path: str, data: bytes) -> None:
        if path not in self._present:
            self._present[path] = self.client.exists(path) is not None
        if not self._present[path]:
            if self._commit(kind, [("create", (path, data), {})]):
                self._present[path] = True
        elif self._n % 3 == 0:
            if self._commit(kind, [("delete", (path,), {})]):
                self._present[path] = False
        else:
            self._commit(kind, [("set_data", (path, data), {})])

    def _quota(self) -> None:
        self._n += 1
        path = f"/config/clients/churn-client-{self._n % 5}"
        self._toggle("quota", path, _j({"version": 1, "config": {
            "producer_byte_rate": str(1_000_000 + self._n)}}))

    def _scram(self) -> None:
        self._n += 1
        user = f"churn-user-{self._n % 4}"
        text, _ = scram_credential(self._n, user, "SCRAM-SHA-256")
        self._toggle("scram", f"/config/users/{user}",
                     _j({"version": 1, "config": {"SCRAM-SHA-256": text}}))

    def _acl(self) -> None:
        self._n += 1
        path = f"/kafka-acl/Topic/churn-acl-{self._n % 4}"
        ops = ["Read", "Write", "Describe"]
        self._toggle("acl", path, _j({"version": 1, "acls": [
            {"principal": f"User:churn{self._n % 7}", "permissionType": "Allow",
             "operation": ops[self._n % 3], "host": "*"}]}))

    def _broker_join(self) -> None:
        if len(self._brokers) >= 2:
            return
        b = 100 + self._n % 50
        self._n += 1
        if b in self._brokers:
            return
        if self._commit("broker_join", [("create", (f"/brokers/ids/{b}", _broker(b)),
                                         {"ephemeral": True})]):
            self._brokers.append(b)

    def _broker_leave(self) -> None:
        if not self._brokers:
            return
        b = self._brokers.pop(0)
        self._commit("broker_leave", [("delete", (f"/brokers/ids/{b}",), {})])

    def _producer_id_block(self) -> None:
        self._pid += 1000
        self._commit("producer_id_block", [("set_data", ("/latest_producer_id_block", _j({
            "version": 1, "broker": 1, "block_start": str(self._pid),
            "block_end": str(self._pid + 999)})), {})])


def main(argv: list[str] | None = None) -> int:
    """The writer as a process (see the module docstring); returns the exit code."""
    p = argparse.ArgumentParser(prog="python -m tests.support.churn",
                                description="Change a Kafka tree in ZooKeeper the way ZooKeeper's "
                                "controller does, until zk2kraft fences it.")
    p.add_argument("--zookeeper", required=True, metavar="CONNECT",
                   help="host:port[/chroot] of a tree written by the sample generator (samples)")
    p.add_argument("--rate", type=float, default=100.0, help="changes per second (default 100)")
    p.add_argument("--ready-file", type=Path, help="written once the first 50 changes are in")
    args = p.parse_args(argv)
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    with Churn(args.zookeeper, rate=args.rate) as churn:
        churn.wait_changes(50, timeout=60)
        if args.ready_file:
            args.ready_file.write_text(f"{churn.changes}\n")
        while not stop.wait(0.2) and not churn.fenced.is_set():
            pass
        churn.stop()
        kinds = ", ".join(f"{k} {n}" for k, n in sorted(churn.counts.items()))
        ending = ("then fenced: its next write failed the /controller_epoch check"
                  if churn.fenced.is_set() else "then stopped, never fenced")
        print(f"writer: {churn.changes} changes at {churn.achieved_rate:.0f}/s ({kinds}), "
              f"{ending}", flush=True)
        for error in churn.errors[:3]:
            print(f"writer: error: {error}", file=sys.stderr, flush=True)
        stop.wait()  # the session holds the writer's brokers: kept until told to stop
    return 1 if churn.errors else 0


if __name__ == "__main__":
    raise SystemExit(main())
