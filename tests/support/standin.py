"""A static quorum of real Kafka 3.9.1 controllers led by zk2kraft's stand-in (oracle tests and
benchmarks/standin.py share it).

The controllers get a long election timeout, so that none of them becomes a candidate before the
stand-in has won epoch 1 (a real controller that wins first writes its bootstrap records). A
stand-in resignation still hands over at once: EndQuorumEpoch makes the preferred successor
stand for election without waiting for its timeout.

The demo (`scripts/demo.sh --standin`) starts the controllers as a process, from the
repository's root, and stops them with SIGTERM::

    python -m tests.support.standin --zookeeper 127.0.0.1:2181/kafka --root DIR --ready-file F

F then holds {"ports": {node id: controller port}, "logs": {node id: server.log}} as JSON.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import functools
import json
import os
import re
import signal
import socket
import ssl
import struct
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.kafka import KafkaController, in_parallel, random_cluster_id, storage_format
from tests.support.migration_cluster import BrokerRpcs, broker_rpcs
from tests.support.ports import free_port
from writers import StandInLeader, decode_response, encode_request, open_log_source

__all__ = ["LONG_ELECTION", "STANDIN", "STANDIN_FOLLOWERS", "StandInQuorum", "follower_segments",
           "migrate_through_standin", "migration_mode_controllers", "remove_raft_voter",
           "standin_quorum", "transitions"]

LONG_ELECTION = {
    "controller.quorum.election.timeout.ms": "30000",
    "controller.quorum.fetch.timeout.ms": "30000",
}
STANDIN, STANDIN_FOLLOWERS = 3000, (3001, 3002)
FOLLOWING = r"Completed transition to FollowerState\([^\n]*leader=3000[^\n]*"


@dataclass
class StandInQuorum:
    """The stand-in, the real controllers and where their logs are."""

    standin: StandInLeader
    controllers: list[KafkaController]
    standin_dir: Path
    cluster_id: str
    ports: dict[int, int]
    directory_ids: dict[int, str]

    def controller(self, node_id: int) -> KafkaController:
        return next(c for c in self.controllers if c.node_id == node_id)


@dataclass(frozen=True)
class BrokerInLog:
    """A broker's registration as the stand-in's own log holds it (what it appended before it
    resigned: its log stops at EndQuorumEpoch)."""

    broker_id: int
    epoch: int
    offset: int  # of its last RegisterBrokerRecord
    migrating: bool
    unfenced_at: int | None  # offset of a BrokerRegistrationChangeRecord(fenced=-1) after it


def brokers_in_standin_log(log_dir: Path) -> dict[int, BrokerInLog]:
    """Every broker's last registration in the stand-in's log, and whether it was unfenced."""
    out: dict[int, BrokerInLog] = {}
    for entry in open_log_source(log_dir).entries():
        for i, rec in enumerate(entry.batch.records):
            data = getattr(rec, "data", {})
            offset = entry.batch.base_offset + i
            if getattr(rec, "type", "") == "REGISTER_BROKER_RECORD":
                out[data["brokerId"]] = BrokerInLog(
                    data["brokerId"], data["brokerEpoch"], offset,
                    bool(data.get("isMigratingZkBroker")), None)
            elif (getattr(rec, "type", "") == "BROKER_REGISTRATION_CHANGE_RECORD"
                  and data.get("fenced") == -1 and data["brokerId"] in out
                  and out[data["brokerId"]].epoch == data["brokerEpoch"]):
                b = out[data["brokerId"]]
                out[b.broker_id] = BrokerInLog(b.broker_id, b.epoch, b.offset, b.migrating,
                                               offset)
    return out


def follower_segments(directory: Path) -> list[Path]:
    """The `.log` segments of a metadata.log.dir, in offset order."""
    return sorted((directory / "__cluster_metadata-0").glob("*.log"))


@contextlib.contextmanager
def standin_quorum(
    root: Path,
    *,
    standin_id: int = 3000,
    controller_ids: Sequence[int] = (3001, 3002),
    heap: str = "256m",
    elect_timeout_s: float = 150.0,
    extra: Mapping[str, str] | None = None,
    dynamic: bool = False,
    pki: Mapping[str, Path] | None = None,
    log4j: Path | None = None,
    sasl_plain: tuple[str, str] | None = None,
    node_extra: Mapping[int, Mapping[str, str]] | None = None,
) -> Iterator[StandInQuorum]:
    """Start the controllers (formatted, long election timeout), let the stand-in win epoch 1,
    and wait until every controller logs that it follows the stand-in. `extra` adds controller
    properties (e.g. a short `controller.quorum.fetch.timeout.ms` so that a dead stand-in is
    noticed quickly; the election timeout stays long so the stand-in still wins first).
    `dynamic` formats every voter, the stand-in's directory included, with kraft.version 1
    (`kafka-storage format --initial-controllers`) and gives the controllers
    `controller.quorum.bootstrap.servers` instead of `controller.quorum.voters`.
    `pki` (`make_pki`'s files) maps the controller listener to SSL with PEM stores and client
    certificates required, and gives the stand-in the matching TLS contexts. `log4j` replaces
    the controllers' log4j configuration (the benchmark silences per-record replay lines).
    `sasl_plain` (user, password) puts SASL/PLAIN on the controller listener (SASL_PLAINTEXT,
    or SASL_SSL with `pki`): one user, which the controllers and the stand-in log in as.
    `node_extra` adds properties to one controller only (by node id), after `extra`.

    Everything is stopped on exit; a controller that cannot start fails the caller with its log.
    """
    ids = [standin_id, *controller_ids]
    ports = {n: free_port() for n in ids}
    cluster = random_cluster_id()
    dir_ids = {n: base64.urlsafe_b64encode(bytes([n % 251 + 1]) * 16).decode()[:22] for n in ids}
    props = {**LONG_ELECTION, **(extra or {})}
    format_args: list[str] = []
    tls_server = tls_client = None
    if pki is not None:
        props.update({
            "listener.security.protocol.map": "CONTROLLER:SSL",
            "ssl.keystore.type": "PEM",
            "ssl.keystore.location": str(pki["server_keystore"]),
            "ssl.truststore.type": "PEM",
            "ssl.truststore.location": str(pki["ca"]),
            "ssl.client.auth": "required",
        })
        tls_server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH, cafile=str(pki["ca"]))
        tls_server.load_cert_chain(pki["server_cert"], pki["server_key"])
        tls_server.verify_mode = ssl.CERT_REQUIRED
        tls_client = ssl.create_default_context(cafile=str(pki["ca"]))
        tls_client.load_cert_chain(pki["client_cert"], pki["client_key"])
    if sasl_plain is not None:
        user, password = sasl_plain
        props.update({
            "listener.security.protocol.map":
                f"CONTROLLER:{'SASL_SSL' if pki is not None else 'SASL_PLAINTEXT'}",
            "sasl.mechanism.controller.protocol": "PLAIN",
            "sasl.enabled.mechanisms": "PLAIN",
            "listener.name.controller.sasl.enabled.mechanisms": "PLAIN",
            "listener.name.controller.plain.sasl.jaas.config":
                "org.apache.kafka.common.security.plain.PlainLoginModule required "
                f'username="{user}" password="{password}" user_{user}="{password}";',
        })
    if dynamic:
        props["controller.quorum.voters"] = ""
        props["controller.quorum.bootstrap.servers"] = ",".join(
            f"127.0.0.1:{ports[n]}" for n in ids)
        format_args = ["--initial-controllers", ",".join(
            f"{n}@127.0.0.1:{ports[n]}:{dir_ids[n]}" for n in ids)]
        # the stand-in's directory is formatted by Kafka too (its bootstrap checkpoint holds
        # the initial voter set); this node is configured only to be formatted, never started
        formatter = KafkaController(root / f"node{standin_id}", root / f"meta{standin_id}",
                                    node_id=standin_id, quorum=ports, extra=props)
        to_format = [formatter.config_path]
    else:
        to_format = []
    nodes = []
    for n in controller_ids:
        node = KafkaController(root / f"node{n}", root / f"meta{n}", node_id=n, quorum=ports,
                               heap=heap, extra={**props, **(node_extra or {}).get(n, {})})
        to_format.append(node.config_path)
        if log4j is not None:
            node.log4j = log4j
        nodes.append(node)
    # one `kafka-storage format` JVM per voter, all at once rather than in turn
    in_parallel([functools.partial(storage_format, config, cluster, extra=format_args)
                 for config in to_format])
    standin: StandInLeader | None = None
    try:
        for node in nodes:
            node.launch()
        standin = StandInLeader(
            standin_id, listen=("127.0.0.1", ports[standin_id]),
            voters={n: ("127.0.0.1", p) for n, p in ports.items()},
            log_dir=root / f"meta{standin_id}", cluster_id=cluster,
            tls_server=tls_server, tls_client=tls_client,
            sasl_users=None if sasl_plain is None else {sasl_plain[0]: sasl_plain[1]},
            sasl_client=sasl_plain)
        standin.elect(elect_timeout_s)
        for node in nodes:
            node.wait_started()
        for node in nodes:
            node.wait_for_log(FOLLOWING.replace("3000", str(standin_id)), 60)
        yield StandInQuorum(standin, nodes, root / f"meta{standin_id}", cluster, ports,
                            dir_ids if dynamic else {})
    finally:
        if standin is not None:
            standin.close()
        for node in nodes:
            node.stop()


def remove_raft_voter(
    port: int, cluster_id: str, voter_id: int, directory_id: str
) -> dict[str, Any]:
    """Send RemoveRaftVoter v0 (what `kafka-metadata-quorum remove-controller` sends) to the
    controller listening on `port`; returns the response body."""
    frame = encode_request(81, 0, 1, "zk2kraft-test", {
        "clusterId": cluster_id, "voterId": voter_id, "voterDirectoryId": directory_id})
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(frame)
        size = struct.unpack(">i", _read(sock, 4))[0]
        return decode_response(81, 0, _read(sock, size))[1]


def _read(sock: socket.socket, n: int) -> bytes:
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("controller closed the connection")
        buf += chunk
    return buf


def transitions(node: KafkaController) -> list[str]:
    """Every `Completed transition to X(...)` state name the node logged, in order."""
    return re.findall(r"Completed transition to ([A-Za-z]+)\(", node.log_text())


@contextlib.contextmanager
def migration_mode_controllers(
    root: Path, connect: str, cluster_id: str, extra: Mapping[str, str] | None = None, *,
    ports: Mapping[int, int] | None = None, heap: str = "512m", jvm_flags: Sequence[str] = (),
    node_extra: Mapping[int, Mapping[str, str]] | None = None,
) -> Iterator[tuple[dict[int, int], list[KafkaController]]]:
    """Real controllers 3001 and 3002 in migration mode on ZooKeeper `connect`, formatted with
    `cluster_id` and waiting for stand-in 3000 (long election timeout, so that it wins the first
    election). `ports` gives every voter's port (brokers configured beforehand need them);
    `jvm_flags` are added to each controller's JVM command line; `node_extra` adds properties
    to one controller only (by node id), after `extra`.
    Yields every voter's port and the controllers; all stopped on exit."""
    ports = dict(ports) if ports else {n: free_port() for n in (STANDIN, *STANDIN_FOLLOWERS)}
    props = {**LONG_ELECTION,
             "zookeeper.metadata.migration.enable": "true",
             "zookeeper.connect": connect,
             # the sample clusters hold a delegation token: the brokers' shared secret
             "delegation.token.secret.key": "zk2kraft-oracle-token-secret", **(extra or {})}
    nodes = [KafkaController(root / f"node{n}", root / f"meta{n}", node_id=n, heap=heap,
                             quorum=ports, extra={**props, **(node_extra or {}).get(n, {})})
             for n in STANDIN_FOLLOWERS]
    try:
        for node in nodes:
            node.jvm_flags = list(jvm_flags)
        # one `kafka-storage format` JVM per voter, all at once rather than in turn
        in_parallel([functools.partial(storage_format, node.config_path, cluster_id)
                     for node in nodes])
        for node in nodes:
            node.launch()
        for node in nodes:
            node.wait_started()
        yield ports, nodes
    finally:
        for node in nodes:
            node.stop()


def verify_voter_dir(connect: str, ports: Mapping[int, int], node_id: int,
                     directory: Path) -> None:
    """`zk2kraft verify` of one voter's metadata dir (the stand-in's or a real controller's own
    copy) against ZooKeeper `connect`, the quorum named by every voter's port: asserts parity
    (exit 0), with verify's output as the message otherwise."""
    quorum = ",".join(f"{n}@127.0.0.1:{p}" for n, p in sorted(ports.items()))
    argv = [sys.executable, "-m", "migrate.cli", "verify", "--zookeeper", connect,
            "--voter", f"{node_id}={directory}", "--quorum-voters", quorum]
    verify = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    assert verify.returncode == 0, verify.stdout + verify.stderr


def migrate_through_standin(
    connect: str, ports: Mapping[int, int], root: Path, *args: str,
    env: Mapping[str, str] | None = None, cutover: str = "now", popen: bool = False,
    broker_wait: float | None = None,
) -> Any:
    """`zk2kraft migrate --cutover CUTOVER --standin 3000@...=ROOT/standin --controller ...`
    with its journal in ROOT/journal and its report in ROOT/m.json, as an operator runs it.
    `broker_wait` gives `--broker-wait` with `--fence-without-brokers` (where /brokers/ids holds
    no running broker: the cutover waits that long for registrations that cannot come, then
    fences even so).
    Returns the finished `CompletedProcess` (text), or the running `Popen` with `popen`."""
    wait = [] if broker_wait is None else ["--broker-wait", f"{broker_wait:g}",
                                           "--fence-without-brokers"]
    cmd = [sys.executable, "-m", "migrate.cli", "migrate", "--zookeeper", connect,
           "--cutover", cutover, *wait,
           "--standin", f"{STANDIN}@127.0.0.1:{ports[STANDIN]}={root / 'standin'}",
           *[f"--controller={n}@127.0.0.1:{ports[n]}" for n in STANDIN_FOLLOWERS],
           "--journal", str(root / "journal"), "--json", str(root / "m.json"), *args]
    full_env = {**os.environ, "COLUMNS": "400", **(env or {})}
    if popen:
        return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=full_env)
    return subprocess.run(cmd, capture_output=True, text=True, timeout=400, env=full_env)


def assert_brokers_stayed_registered(standin_dir: Path, report: dict[str, Any],
                                    controller_log: str, output: str = "") -> BrokerRpcs:
    """The brokers registered with the stand-in and stayed registered across the handover.

    Kafka's facts: a migrating ZooKeeper broker's RegisterBrokerRecord has isMigratingZkBroker
    and, written by an active controller, the offset of that record as its broker epoch; the
    broker is unfenced by a BrokerRegistrationChangeRecord(fenced=-1) once caught up. A broker
    whose epoch the new leader's log holds keeps heartbeating with it and does not register
    again (that controller logs "Registering a new incarnation" only for a new one), and its
    MigrationPropagator adds unfenced migrating brokers to its channel manager, so nothing is
    skipped "since it is offline"."""
    held = brokers_in_standin_log(standin_dir)
    assert sorted(held) == [0, 1, 2], held
    for b in held.values():
        assert b.migrating and b.epoch == b.offset and b.unfenced_at is not None, (
            b, output[-3000:])
    assert report["brokers_unregistered_at_fence"] == [], report
    rpcs = broker_rpcs(controller_log)
    assert rpcs.registered == (), rpcs
    assert rpcs.offline == 0, rpcs
    return rpcs


def main(argv: Sequence[str] | None = None) -> int:
    """Controllers 3001 and 3002 in migration mode for the stand-in, held until SIGTERM/SIGINT
    (see the module docstring); returns the exit code."""
    from kazoo.client import KazooClient

    p = argparse.ArgumentParser(prog="python -m tests.support.standin",
                                description="Start real Kafka 3.9.1 controllers 3001 and 3002 in "
                                "migration mode, waiting for stand-in 3000; stop on SIGTERM.")
    p.add_argument("--zookeeper", required=True, metavar="CONNECT")
    p.add_argument("--root", type=Path, required=True, help="their config, logs and voter dirs")
    p.add_argument("--ready-file", type=Path, required=True)
    args = p.parse_args(argv)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda signum, frame: stop.set())
    zk = KazooClient(hosts=args.zookeeper, timeout=30)
    zk.start(timeout=30)
    try:
        cluster_id = str(json.loads(zk.get("/cluster/id")[0])["id"])
    finally:
        zk.stop()
        zk.close()
    with migration_mode_controllers(args.root, args.zookeeper, cluster_id) as (ports, nodes):
        args.ready_file.write_text(json.dumps({
            "ports": {str(n): port for n, port in ports.items()},
            "logs": {str(n.node_id): str(n.server_log) for n in nodes}}))
        stop.wait()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
