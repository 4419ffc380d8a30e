"""The runbooks in docs/runbooks/ are exactly what `plan --json` prints for the sample cluster.

Each runbook is regenerated here from `zk2kraft plan ... --json` (`operator_sequence`) on the
sample cluster in real ZooKeeper, by the same code as `scripts/gen_runbooks.py`, and must equal
the file in docs/: change the sequence and the runbooks must be regenerated, so README, docs
and plan's text cannot disagree. The README links every runbook. The hand-written checks below
pin facts each path's runbook must state (Kafka's, not the code's).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.support.runbooks import RUNBOOK_DIR, build_runbooks, sample_spec, stop_every_broker

README = Path(__file__).resolve().parents[2] / "README.md"


def test_runbooks_in_docs_are_plans_sequence_for_the_sample_cluster(
    sample_cluster: Callable[..., Any],
) -> None:
    online = sample_cluster(sample_spec())
    offline = sample_cluster(sample_spec())
    stop_every_broker(offline.client)
    books = build_runbooks(online.connect, offline.connect)
    on_disk = {p.name: p.read_text() for p in RUNBOOK_DIR.glob("*.md")}
    assert sorted(on_disk) == sorted(books), "run python3 scripts/gen_runbooks.py"
    for name, text in books.items():
        diff = "\n".join(difflib.unified_diff(on_disk[name].splitlines(), text.splitlines(),
                                              f"docs/runbooks/{name}", "plan's sequence",
                                              lineterm="", n=1))
        assert on_disk[name] == text, (
            f"docs/runbooks/{name} is not what plan prints; run python3 scripts/gen_runbooks.py"
            f"\n{diff[:4000]}")
    # facts each runbook must carry, written by hand
    standin = books["online-standin.md"]
    assert "controller.quorum.election.timeout.ms=30000" in standin
    assert "metadata.log.dir=<controller 3001's metadata directory>" in standin
    assert "describe --replication" in standin and "Lag 0" in standin
    assert "STALE_BROKER_EPOCH" in standin and "STALE_BROKER_EPOCH" in books["online-voter.md"]
    assert "metadata.log.dir=/var/lib/kraft/c0" in books["online-voter.md"]
    assert "metadata.version `3.9-IV0`" in books["offline-3.9.md"]
    assert "metadata.version `4.4-IV2`" in books["offline-4.x.md"]
    for name in ("offline-3.9.md", "offline-4.x.md"):
        text = books[name]
        assert "listener.security.protocol.map=CONTROLLER:PLAINTEXT" in text
        assert "controller.listener.names=CONTROLLER" in text
        assert "zk2kraft prepare-broker --log-dirs" in text and "--dry-run" in text
        # the source of the migrated metadata is required: every printed line carries it
        assert text.count("log.dirs> --zookeeper zk1:2181/kafka") == text.count(
            "zk2kraft prepare-broker --log-dirs") > 0
        assert "controlled shutdown attempts failed" in text
        assert text.index("start every controller") < text.index("start every broker at once")
    assert "controller.performance.always.log.threshold.ms" in books["offline-4.x.md"]
    assert "controller.performance.always.log.threshold.ms" not in books["offline-3.9.md"]
    assert "zk2kraft rollback" in books["rollback.md"]


def test_readme_links_every_runbook() -> None:
    linked = set(re.findall(r"\(docs/runbooks/([\w.-]+\.md)\)", README.read_text()))
    assert linked == {p.name for p in RUNBOOK_DIR.glob("*.md")}
