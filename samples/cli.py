"""The sample generator's command line (`python -m samples`, see `samples/__main__.py`)::

    python -m samples --zookeeper 127.0.0.1:2181/kafka \\
        [--topics N] [--partitions M] [--replication-factor R] [--brokers B] [--seed S] \\
        [--preset clean|everything] [--json] [--hold] [--ready-file PATH]

With `--hold` the process keeps its session (and so the ephemeral broker znodes) alive until it
is killed (SIGTERM/SIGINT); `--ready-file` is written once the tree is complete, so scripts can
wait for it. Exit codes: 0 ok, 2 bad flags or the chroot already holds a tree, 3 ZooKeeper
unreachable.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from types import FrameType

import orjson
from kazoo.client import KazooClient
from kazoo.exceptions import KazooException
from kazoo.handlers.threading import KazooTimeoutError

from samples._cluster import SampleManifest, SampleSpec, generate_sample_cluster

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m samples",
        description="Write a sample ZK-mode Kafka 3.x tree into ZooKeeper.",
    )
    p.add_argument("--zookeeper", required=True, metavar="CONNECT",
                   help="host:port[,host:port...][/chroot]; the chroot is created if missing")
    p.add_argument("--topics", type=int, default=10)
    p.add_argument("--partitions", type=int, default=3, help="partitions per topic")
    p.add_argument("--replication-factor", type=int, default=None,
                   help="default: min(3, brokers)")
    p.add_argument("--brokers", type=int, default=3)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--preset", choices=["clean", "everything"], default="clean")
    p.add_argument("--timeout", type=float, default=15.0, help="connect timeout, seconds")
    p.add_argument("--json", action="store_true", help="print the manifest summary as JSON")
    p.add_argument("--hold", action="store_true",
                   help="keep the session (ephemeral brokers) alive until killed")
    p.add_argument("--ready-file", type=Path, help="write this file when the tree is complete")
    return p


def _summary(m: SampleManifest) -> dict[str, object]:
    """What the CLI prints: counts and case paths, never the secrets."""
    return {
        "cluster_id": m.cluster_id,
        "brokers": m.brokers,
        "topics": m.topics,
        "partitions_written": m.partitions_written,
        "partitions_to_migrate": m.partitions_to_migrate,
        "state_znodes": m.state_znodes,
        "znodes": m.znodes,
        "ops": m.ops,
        "elapsed_s": round(m.elapsed_s, 3),
        "session_id": f"0x{m.session_id:x}",
        "paths": {k: list(v) for k, v in m.paths.items()},
        "spec": asdict(m.spec),
    }


def _stop_on_signal() -> threading.Event:
    """An event SIGTERM and SIGINT set from now on.

    `--hold` installs it before the tree is announced (summary line, ready file): a script
    that signals as soon as it sees either must end the hold cleanly (session closed, exit 0),
    not kill the process with the default action. Under a loaded CI run the signal once came
    first, and the process died of it (-15).
    """
    done = threading.Event()

    def stop(signum: int, frame: FrameType | None) -> None:
        done.set()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    return done


def main(argv: Sequence[str] | None = None) -> int:
    """Run the generator CLI; returns the exit code."""
    args = _parser().parse_args(argv)
    rf = args.replication_factor or min(3, max(args.brokers, 1))
    preset = SampleSpec.everything if args.preset == "everything" else SampleSpec.clean
    try:
        spec = preset(topics=args.topics, partitions_per_topic=args.partitions,
                      replication_factor=rf, brokers=args.brokers, seed=args.seed)
        spec.validate()
    except (ValueError, TypeError) as exc:
        sys.stderr.write(f"samples: error: {exc}\n")
        return 2
    hosts, slash, chroot = args.zookeeper.partition("/")
    client = KazooClient(hosts=hosts, timeout=args.timeout)
    try:
        client.start(timeout=args.timeout)
        if slash and chroot.strip("/"):  # create the chroot first, then work inside it
            client.ensure_path("/" + chroot.strip("/"))
            client.chroot = "/" + chroot.strip("/")
    except (KazooTimeoutError, KazooException, OSError) as exc:
        sys.stderr.write(f"samples: cannot reach ZooKeeper {args.zookeeper}: {exc}\n")
        client.close()
        return 3
    try:
        try:
            manifest = generate_sample_cluster(client, spec)
        except RuntimeError as exc:
            sys.stderr.write(f"samples: error: {exc}\n")
            return 2
        held = _stop_on_signal() if args.hold else None
        if args.json:
            sys.stdout.write(orjson.dumps(_summary(manifest)).decode() + "\n")
        else:
            sys.stdout.write(
                f"sample cluster {manifest.cluster_id}: {manifest.brokers} brokers, "
                f"{manifest.topics} topics, {manifest.partitions_written} partitions "
                f"({manifest.partitions_to_migrate} to migrate), {manifest.znodes} znodes in "
                f"{manifest.elapsed_s:.2f}s; preset {args.preset}\n"
            )
        sys.stdout.flush()
        if args.ready_file:
            args.ready_file.write_text(f"0x{manifest.session_id:x}\n")
        while held is not None and not held.wait(3600):
            pass
    finally:
        client.stop()
        client.close()
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
