"""Record the Raft traffic real Kafka 3.9.1 controllers exchange, for byte-exact codec tests.

There is no tcpdump on the CI hosts, so a small recording TCP proxy stands between voters: each
voter's address in `controller.quorum.voters` is a proxy port that forwards to the voter's real
listener. Every frame is kept with its api key and version (responses are matched to their
request by correlation id), so the unit tests can decode Kafka's own bytes and check that our
encoder reproduces them.

    python -m tests.support.raft_capture OUT.json        # two real controllers, then EndQuorumEpoch
    python -m tests.support.raft_capture OUT.json --standin   # controllers led by the stand-in
    python -m tests.support.raft_capture OUT.json --brokers   # a broker registering, Kafka's way

`RecordingProxy` is also used in front of zk2kraft's stand-in leader to capture what Kafka sends
to it (requests) and answers it (responses) at the versions the stand-in advertises.
"""

from __future__ import annotations

import json
import socket
import struct
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["Frame", "RecordingProxy", "capture_two_controllers"]

_HDR = struct.Struct(">ihhi")


@dataclass
class Frame:
    """One request or response frame as it crossed the proxy (bytes after the size prefix)."""

    direction: str  # "request" (to the proxied node) or "response" (from it)
    api_key: int
    api_version: int
    payload: bytes

    def to_json(self) -> dict[str, Any]:
        return {"direction": self.direction, "api_key": self.api_key,
                "api_version": self.api_version, "hex": self.payload.hex()}


def _read_exact(sock: socket.socket, n: int) -> bytes | None:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return bytes(buf)


@dataclass
class RecordingProxy:
    """Forward 127.0.0.1:`port` to 127.0.0.1:`target`, recording whole frames both ways."""

    port: int
    target: int
    frames: list[Frame] = field(default_factory=list)
    max_frame: int = 1 << 16
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _server: socket.socket | None = None
    _stopped: bool = False

    def start(self) -> None:
        srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        srv.bind(("127.0.0.1", self.port))
        srv.listen(16)
        self._server = srv
        threading.Thread(target=self._accept, daemon=True).start()

    def stop(self) -> None:
        self._stopped = True
        if self._server is not None:
            self._server.close()

    def _accept(self) -> None:
        assert self._server is not None
        while not self._stopped:
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target), timeout=5)
            except OSError:
                client.close()
                continue
            upstream.settimeout(None)
            pending: dict[int, tuple[int, int]] = {}
            threading.Thread(target=self._pipe, args=(client, upstream, True, pending),
                             daemon=True).start()
            threading.Thread(target=self._pipe, args=(upstream, client, False, pending),
                             daemon=True).start()

    def _pipe(self, src: socket.socket, dst: socket.socket, requests: bool,
              pending: dict[int, tuple[int, int]]) -> None:
        try:
            while True:
                size_raw = _read_exact(src, 4)
                if size_raw is None:
                    break
                size = struct.unpack(">i", size_raw)[0]
                payload = _read_exact(src, size)
                if payload is None:
                    break
                if requests:
                    _, key, version, corr = _HDR.unpack_from(size_raw + payload[:8])
                    pending[corr] = (key, version)
                    frame = Frame("request", key, version, payload)
                else:
                    corr = struct.unpack_from(">i", payload, 0)[0]
                    key, version = pending.pop(corr, (-1, -1))
                    frame = Frame("response", key, version, payload)
                if len(payload) <= self.max_frame:
                    with self._lock:
                        self.frames.append(frame)
                dst.sendall(size_raw + payload)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                s.close()

    def kinds(self) -> Counter[tuple[str, int, int]]:
        with self._lock:
            return Counter((f.direction, f.api_key, f.api_version) for f in self.frames)


def capture_two_controllers(out: Path, *, per_kind: int = 4) -> dict[str, Any]:
    """Run controllers 3001 and 3002 (static quorum) behind recording proxies, let one lead,
    stop it (it resigns with EndQuorumEpoch), and write the first frames of every kind."""
    from tests.support.kafka import KafkaController, random_cluster_id, storage_format
    from tests.support.ports import free_port

    with tempfile.TemporaryDirectory(prefix="zk2kraft-capture-") as tmp:
        root = Path(tmp)
        ids = (3001, 3002)
        voter_ports = {n: free_port() for n in ids}
        listen_ports = {n: free_port() for n in ids}
        proxies = {n: RecordingProxy(voter_ports[n], listen_ports[n]) for n in ids}
        for p in proxies.values():
            p.start()
        cluster = random_cluster_id()
        nodes = []
        for n in ids:
            node = KafkaController(
                root / f"node{n}", root / f"meta{n}", node_id=n, quorum=voter_ports,
                heap="256m",
                extra={"listeners": f"CONTROLLER://127.0.0.1:{listen_ports[n]}"})
            storage_format(node.config_path, cluster)
            nodes.append(node)
        try:
            for node in nodes:
                node.launch()
            for node in nodes:
                node.wait_started()
            time.sleep(3)  # let the follower fetch for a while (long polls, registrations)
            leader = next(n for n in nodes if "Completed transition to Leader" in n.log_text())
            leader.stop()  # a graceful shutdown resigns with EndQuorumEpoch
            other = next(n for n in nodes if n is not leader)
            other.wait_for_log(r"Completed transition to Leader", 30)
            time.sleep(1)
        finally:
            for node in nodes:
                node.stop()
            for p in proxies.values():
                p.stop()
    # the first frames of each kind (start-up: errors, elections) and the largest (a settled
    # leader's Fetch responses with records)
    kept: list[dict[str, Any]] = []
    for p in proxies.values():
        by_kind: dict[tuple[str, int, int], list[Frame]] = {}
        for f in p.frames:
            by_kind.setdefault((f.direction, f.api_key, f.api_version), []).append(f)
        chosen = {id(f) for fs in by_kind.values()
                  for f in fs[:per_kind // 2]
                  + sorted(fs, key=lambda x: -len(x.payload))[:per_kind - per_kind // 2]}
        kept += [f.to_json() for f in p.frames if id(f) in chosen]
    doc = {"kafka": "3.9.1", "cluster_id": cluster, "voters": list(ids), "frames": kept}
    out.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    return doc


def capture_standin_v0(out: Path, *, per_kind: int = 4) -> dict[str, Any]:
    """Controllers 3001 and 3002 led by zk2kraft's stand-in 3000: record what they send to it
    (at the versions it advertises) and what they answer its Vote, BeginQuorumEpoch and
    EndQuorumEpoch v0 (the stand-in reaches them through proxies)."""
    from tests.support.kafka import KafkaController, random_cluster_id, storage_format
    from tests.support.ports import free_port
    from tests.support.standin import FOLLOWING, LONG_ELECTION
    from writers import MetadataRecord, StandInLeader

    with tempfile.TemporaryDirectory(prefix="zk2kraft-capture-") as tmp:
        root = Path(tmp)
        ports = {n: free_port() for n in (3000, 3001, 3002)}
        front = {n: free_port() for n in (3000, 3001, 3002)}
        proxies = {n: RecordingProxy(front[n], ports[n]) for n in ports}
        for p in proxies.values():
            p.start()
        cluster = random_cluster_id()
        quorum = {3000: front[3000], 3001: ports[3001], 3002: ports[3002]}
        nodes = []
        for n in (3001, 3002):
            node = KafkaController(root / f"node{n}", root / f"meta{n}", node_id=n, quorum=quorum,
                                   heap="256m", extra=LONG_ELECTION)
            storage_format(node.config_path, cluster)
            nodes.append(node)
        standin = None
        try:
            for node in nodes:
                node.launch()
            standin = StandInLeader(
                3000, listen=("127.0.0.1", ports[3000]), log_dir=root / "meta3000",
                voters={n: ("127.0.0.1", front[n]) for n in ports}, cluster_id=cluster)
            standin.elect(150)
            for node in nodes:
                node.wait_started()
                node.wait_for_log(FOLLOWING, 60)
            standin.append_records(
                [MetadataRecord("FEATURE_LEVEL_RECORD", 0,
                                {"name": "metadata.version", "featureLevel": 21})],
                timestamp_ms=1_700_000_000_000)
            time.sleep(2)
            standin.resign()
            time.sleep(2)
        finally:
            if standin is not None:
                standin.close()
            for node in nodes:
                node.stop()
            for p in proxies.values():
                p.stop()
    # keep only what Kafka produced: its requests to the stand-in, its answers to the stand-in
    kept: list[dict[str, Any]] = []
    for n, p in proxies.items():
        seen: Counter[tuple[str, int, int]] = Counter()
        kafkas = "request" if n == 3000 else "response"
        for f in p.frames:
            if f.direction != kafkas:
                continue
            k = (f.direction, f.api_key, f.api_version)
            if seen[k] < per_kind:
                seen[k] += 1
                kept.append(f.to_json())
    doc = {"kafka": "3.9.1", "cluster_id": cluster, "voters": [3000, 3001, 3002],
           "standin": 3000, "frames": kept}
    out.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    return doc


def capture_broker_rpcs(out: Path, *, per_kind: int = 3) -> dict[str, Any]:
    """A ZooKeeper-mode 3.9.1 broker in migration mode registering with a real 3.9.1 KRaft
    controller in migration mode (Kafka's own migration, PRE_MIGRATION): the broker reaches
    the controller through a proxy, which records BrokerRegistration and BrokerHeartbeat both
    ways (the broker's requests, the controller's answers) and the ApiVersions exchange."""
    from tests.support.kafka import KafkaController, KafkaZkBroker, storage_format
    from tests.support.ports import free_port
    from tests.support.zk import ZkServer

    with tempfile.TemporaryDirectory(prefix="zk2kraft-capture-") as tmp:
        root = Path(tmp)
        zk = ZkServer(root / "zk").start()
        controller_port, front = free_port(), free_port()
        proxy = RecordingProxy(front, controller_port, max_frame=1 << 20)
        proxy.start()
        migration = {"zookeeper.metadata.migration.enable": "true",
                     "zookeeper.connect": zk.connect, "controller.listener.names": "CONTROLLER"}
        broker = KafkaZkBroker(root / "broker0", zk.connect, broker_id=0, heap="256m", extra={
            **migration, "controller.quorum.voters": f"3000@127.0.0.1:{front}",
            "inter.broker.protocol.version": "3.9",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT"})
        controller = KafkaController(
            root / "controller", root / "meta3000", node_id=3000, heap="256m",
            quorum={3000: controller_port},
            extra={**migration,
                   "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT"})
        try:
            broker.launch()
            broker.wait_started()
            cluster = json.loads(zk_get(zk.connect, "/cluster/id"))["id"]
            storage_format(controller.config_path, cluster)
            controller.launch()
            controller.wait_started()
            broker.wait_for_log(r"The broker has been unfenced", 120)
            time.sleep(5)  # a few heartbeats of the unfenced broker
        finally:
            broker.stop()
            controller.stop()
            proxy.stop()
            zk.stop()
    kept: list[dict[str, Any]] = []
    seen: Counter[tuple[str, int, int]] = Counter()
    for f in proxy.frames:
        k = (f.direction, f.api_key, f.api_version)
        if f.api_key in (18, 62, 63) and seen[k] < per_kind:
            seen[k] += 1
            kept.append(f.to_json())
    doc = {"kafka": "3.9.1", "cluster_id": cluster, "broker": 0, "controller": 3000,
           "frames": kept}
    out.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    return doc


def zk_get(connect: str, path: str) -> bytes:
    """One znode's data (kazoo, short-lived session)."""
    from kazoo.client import KazooClient

    client = KazooClient(hosts=connect)
    client.start(30)
    try:
        data: bytes = client.get(path)[0]
        return data
    finally:
        client.stop()
        client.close()


if __name__ == "__main__":
    if sys.argv[2:] == ["--brokers"]:
        result = capture_broker_rpcs(Path(sys.argv[1]))
        print(Counter((f["direction"], f["api_key"], f["api_version"])
                      for f in result["frames"]))
        sys.exit(0)
    which = capture_standin_v0 if sys.argv[2:] == ["--standin"] else capture_two_controllers
    result = which(Path(sys.argv[1]))
    print(Counter((f["direction"], f["api_key"], f["api_version"]) for f in result["frames"]))
