"""Wall-clock figures the tests used to assert (they flaked on a shared machine): printed here.

    python benchmarks/timings.py                    # own ZooKeeper, 100,000 sample partitions
    python benchmarks/timings.py --partitions 20000 # quicker

Figures (seconds, wall clock, on whatever load the machine has right now):
  - `zk2kraft plan` against a closed port with `--zk-timeout 3`: the time to exit 3
    (the timeout plus interpreter start-up and teardown; was asserted < 13 s);
  - `zk2kraft plan` with a bad flag (`--metadata-version 9.9-IV9`) and `--zk-timeout 20`:
    the time to exit 2 without connecting (was asserted < 5 s);
  - `zkreader.open_session` on a closed port with a 2 s timeout (was asserted < 5 s);
  - generating a sample cluster of --partitions partitions (100,000 was asserted < 60 s).
It is not a test: nothing here fails on a slow machine.
"""

from __future__ import annotations

import argparse
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kazoo.client import KazooClient  # noqa: E402

from samples import SampleSpec, generate_sample_cluster  # noqa: E402
from zkreader import ConnectOptions, ZkUnreachableError, open_session  # noqa: E402


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _cli(*argv: str) -> tuple[float, int]:
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "migrate.cli", *argv], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    return time.monotonic() - started, proc.returncode


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--partitions", type=int, default=100_000)
    p.add_argument("--topics", type=int, default=1000)
    p.add_argument("--connect", help="use this ZooKeeper (host:port) instead of starting one")
    args = p.parse_args(argv)

    rows: list[tuple[str, float, str]] = []
    s, code = _cli("plan", "--zookeeper", f"127.0.0.1:{_closed_port()}/kafka",
                   "--zk-timeout", "3", "--json", "-")
    rows.append(("plan, unreachable ZooKeeper, --zk-timeout 3", s, f"exit {code}"))
    s, code = _cli("plan", "--zookeeper", f"127.0.0.1:{_closed_port()}", "--zk-timeout", "20",
                   "--metadata-version", "9.9-IV9")
    rows.append(("plan, bad --metadata-version (no connection)", s, f"exit {code}"))
    started = time.monotonic()
    try:
        open_session(ConnectOptions(f"127.0.0.1:{_closed_port()}", timeout_s=2.0))
        outcome = "connected?!"
    except ZkUnreachableError:
        outcome = "ZkUnreachableError"
    rows.append(("open_session, closed port, timeout 2 s", time.monotonic() - started, outcome))

    server = None
    if args.connect:
        connect = args.connect
    else:
        from tests.support.zk import ZkServer

        server = ZkServer(heap="512m").start()
        connect = server.connect
    chroot = f"/timings_{uuid.uuid4().hex[:8]}"
    admin = KazooClient(connect)
    admin.start(timeout=30)
    gen = KazooClient(f"{connect}{chroot}")
    try:
        admin.create(chroot)
        gen.start(timeout=30)
        per_topic = max(1, args.partitions // args.topics)
        started = time.monotonic()
        m = generate_sample_cluster(
            gen, SampleSpec.clean(topics=args.topics, partitions_per_topic=per_topic, brokers=6)
        )
        rows.append((f"generate sample cluster, {m.partitions_written} partitions",
                     time.monotonic() - started, f"{m.znodes} znodes"))
    finally:
        gen.stop()
        gen.close()
        admin.delete(chroot, recursive=True)
        admin.stop()
        admin.close()
        if server is not None:
            server.stop()

    for label, seconds, note in rows:
        print(f"{label:<52} {seconds:>7.2f} s   {note}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
