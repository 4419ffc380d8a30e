"""Produce the golden files with real Kafka (run once; review the diff before committing).

    python -m tests.golden.make_golden            # every case in GOLDEN_SPECS
    python -m tests.golden.make_golden clean-3.9-IV0

For each case: start a ZooKeeper server of its own, generate the fixed sample tree, run
`zk2kraft migrate --cutover none` into three voter dirs, run Kafka 3.9.1's
`kafka.tools.DumpLogSegments --cluster-metadata-decoder` on the first voter's segment, mask what
ZooKeeper assigns (tests/golden/golden.py says what and why) and write
tests/golden/<case>.dump.txt. Needs the Kafka jars (tests/kafka/fetch.sh) and Debian's ZooKeeper.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from tests.golden.golden import (
    GOLDEN_SPECS,
    migrate_golden,
    normalize,
    segment,
)
from tests.support.kafka import dump_log
from tests.support.zk import ZkServer


def main(argv: list[str]) -> int:
    names = argv or sorted(GOLDEN_SPECS)
    server = ZkServer(heap="256m").start()
    try:
        for name in names:
            case = GOLDEN_SPECS[name]
            with tempfile.TemporaryDirectory(prefix="zk2kraft-golden-") as work:
                dirs, czxids = migrate_golden(server.connect, case, Path(work))
                text = normalize(dump_log(segment(dirs[min(dirs)])), czxids)
            case.path.write_text(text)
            print(f"{case.path}: {text.count('payload:')} records")
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
