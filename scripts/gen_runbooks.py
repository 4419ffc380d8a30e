#!/usr/bin/env python3
"""Write docs/runbooks/*.md from `zk2kraft plan --json` on the sample cluster.

Starts a local ZooKeeper (Debian's, as the tests do), writes the sample cluster into it twice
(running, and with every broker stopped), runs `plan` for each path and renders its
`operator_sequence` (migrate/online/runbook.py). Run it after changing the sequence;
tests/integration/test_runbooks.py fails until the files match.

    python3 scripts/gen_runbooks.py [--check]     # --check: exit 1 if a file would change
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from samples import generate_sample_cluster  # noqa: E402
from tests.support.runbooks import (  # noqa: E402
    RUNBOOK_DIR,
    build_runbooks,
    sample_spec,
    stop_every_broker,
)
from tests.support.zk import ZkServer, client_in_new_chroot  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 if a runbook differs from the generated one")
    args = parser.parse_args()
    server = ZkServer().start()
    try:
        online, running = client_in_new_chroot(server.connect, "runbook_online")
        offline, stopped = client_in_new_chroot(server.connect, "runbook_offline")
        try:
            generate_sample_cluster(running, sample_spec())
            generate_sample_cluster(stopped, sample_spec())
            stop_every_broker(stopped)
            books = build_runbooks(online, offline)
        finally:
            for client in (running, stopped):
                client.stop()
                client.close()
    finally:
        server.stop()
    stale = [p for p in RUNBOOK_DIR.glob("*.md") if p.name not in books]
    changed = [name for name, text in books.items()
               if not (RUNBOOK_DIR / name).is_file() or (RUNBOOK_DIR / name).read_text() != text]
    if args.check:
        for name in changed + [p.name for p in stale]:
            print(f"gen_runbooks: docs/runbooks/{name} differs from the generated one")
        return 1 if changed or stale else 0
    RUNBOOK_DIR.mkdir(parents=True, exist_ok=True)
    for name in changed:
        (RUNBOOK_DIR / name).write_text(books[name])
        print(f"gen_runbooks: wrote docs/runbooks/{name}")
    for path in stale:
        path.unlink()
        print(f"gen_runbooks: removed docs/runbooks/{path.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
