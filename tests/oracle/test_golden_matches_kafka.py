"""The golden files still say what Kafka 3.9.1 says about today's `zk2kraft migrate` log.

tests/golden/*.dump.txt hold Kafka's DumpLogSegments output for the log migrated from a fixed
sample tree (tests/golden/golden.py); the integration tests take their expected records from
them instead of from the translator. Here the same tree is migrated again through the CLI and
Kafka's own `kafka.tools.DumpLogSegments --cluster-metadata-decoder` must print exactly the
golden text (after masking the values ZooKeeper assigns, checked first). If the translator
changes on purpose, regenerate with `python -m tests.golden.make_golden` and review the diff.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.golden.golden import (
    GOLDEN_SPECS,
    golden_text,
    migrate_golden,
    normalize,
    segment,
)
from tests.support.kafka import dump_log
from tests.support.zk import ZkServer

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("name", sorted(GOLDEN_SPECS))
def test_kafka_prints_the_golden_file_for_todays_log(
    zk_server: ZkServer, tmp_path: Path, name: str
) -> None:
    case = GOLDEN_SPECS[name]
    dirs, czxids = migrate_golden(zk_server.connect, case, tmp_path)
    texts = {v: normalize(dump_log(segment(d)), czxids) for v, d in dirs.items()}
    assert "isvalid: false" not in texts[min(texts)]
    assert texts[min(texts)] == golden_text(case)
    assert len(set(texts.values())) == 1  # every voter holds the same log
