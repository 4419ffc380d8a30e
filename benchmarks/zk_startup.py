"""ZooKeeper start-up: local process vs container (docker-compose.test.yml). Prints figures; it is
not a test. It decides which backend `scripts/demo.sh` uses by default (the faster on a fresh
machine) and documents what the container path costs.

    python benchmarks/zk_startup.py             # 5 starts of each
    python benchmarks/zk_startup.py --runs 10

Figures (wall time from "start" to the first `imok` and a standalone `srvr`, median and range):
  (1) process: Debian's ZooKeeper 3.8 as `java -cp ... QuorumPeerMain` (tests/support/zk.py);
  (2) container: `docker-compose up -d zk` on the engine scripts/install.sh started;
A fresh machine also pays, once, before (2) can run at all: the engine's start and the image
build that scripts/install-containers.sh prints (debootstrap + import + two docker builds).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.containers import COMPOSE_FILE, compose_command, docker_problem  # noqa: E402
from tests.support.ports import free_ports  # noqa: E402
from tests.support.zk import ZkServer, _server_mode, four_letter  # noqa: E402


def _ready(port: int) -> bool:
    return (four_letter("127.0.0.1", port, "ruok") == "imok"
            and _server_mode("127.0.0.1", port) == "standalone")


def _wait(port: int, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not _ready(port):
        if time.monotonic() > deadline:
            raise RuntimeError(f"no ZooKeeper on 127.0.0.1:{port} within {timeout_s:.0f}s")
        time.sleep(0.02)


def process_start() -> float:
    server = ZkServer()
    t0 = time.monotonic()
    server.node.spawn()
    try:
        _wait(server.port)
        return time.monotonic() - t0
    finally:
        server.stop()


def container_start() -> float:
    (port,) = free_ports(1)
    project = f"zkbench{os.getpid()}"
    base = [*compose_command().split(), "-f", str(COMPOSE_FILE), "-p", project]
    env = {**os.environ, "ZK_PORT": str(port)}
    t0 = time.monotonic()
    subprocess.run([*base, "up", "-d", "zk"], env=env, check=True, capture_output=True)
    try:
        _wait(port)
        return time.monotonic() - t0
    finally:
        subprocess.run([*base, "down", "-v", "-t", "5"], env=env, check=False,
                       capture_output=True)


def _line(name: str, xs: list[float]) -> str:
    return (f"{name:<10} median {statistics.median(xs):5.2f} s   "
            f"min {min(xs):5.2f}   max {max(xs):5.2f}   (n={len(xs)})")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    with open("/proc/loadavg") as f:
        print(f"load average at start: {f.read().split()[0]} on {os.cpu_count()} cores")
    proc = [process_start() for _ in range(args.runs)]
    print(_line("process", proc))
    problem = docker_problem()
    if problem:
        print(f"container  not measured: {problem}")
        return 0
    cont = [container_start() for _ in range(args.runs)]
    print(_line("container", cont))
    return 0


if __name__ == "__main__":
    sys.exit(main())
