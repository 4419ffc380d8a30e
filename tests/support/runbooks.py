"""Build docs/runbooks/ from `zk2kraft plan --json` on the sample cluster.

Shared by `scripts/gen_runbooks.py` (writes the files) and `tests/integration/test_runbooks.py`
(regenerates and compares), so both run exactly the same `plan` commands. The only values put
in by hand are the ones an operator supplies: the ZooKeeper connect string shown
(`zk1:2181/kafka` for whichever local ZooKeeper ran the plans), hosts, ports and directories
(in `migrate.online.runbook.RUNBOOKS`).
"""

from __future__ import annotations

import contextlib
import io
import json
import tempfile
from pathlib import Path
from typing import Any

from kazoo.client import KazooClient

from migrate.cli import main
from migrate.online.runbook import ROLLBACK_RUNBOOK, RUNBOOKS, render_rollback, render_runbook

RUNBOOK_DIR = Path(__file__).resolve().parents[2] / "docs" / "runbooks"
SHOWN_ZOOKEEPER = "zk1:2181/kafka"


def sample_spec() -> Any:
    """The sample cluster the runbooks show (fixed seed: the same ids on every run)."""
    from samples import SampleSpec

    return SampleSpec.clean(topics=2, partitions_per_topic=2, replication_factor=3, brokers=3,
                            seed=42)


def stop_every_broker(client: KazooClient) -> None:
    """What the offline path's first step leaves: no registrations, no `/controller`."""
    for child in client.get_children("/brokers/ids"):
        client.delete(f"/brokers/ids/{child}")
    client.delete("/controller")


def _plan_sequence(connect: str, flags: tuple[str, ...]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "plan.json"
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            code = main(["plan", "--zookeeper", connect, "--quiet", "--json", str(report),
                         *flags])
        doc = json.loads(report.read_text())
    if code not in (0, 1) or "operator_sequence" not in doc:
        raise AssertionError(f"plan {' '.join(flags)} exited {code} without a sequence: {doc}")
    sequence = doc["operator_sequence"]
    assert isinstance(sequence, dict)
    return sequence


def build_runbooks(online_connect: str, offline_connect: str) -> dict[str, str]:
    """File name -> text of every runbook.

    Args:
        online_connect: ZooKeeper connect string (with chroot) of the sample cluster, running.
        offline_connect: the same sample with every broker stopped (`stop_every_broker`).
    """
    books: dict[str, str] = {}
    sequences = []
    for book in RUNBOOKS:
        connect = offline_connect if book.offline else online_connect
        doc = _plan_sequence(connect, book.plan_flags)
        # the one substitution: the local ZooKeeper that ran the plan -> the shown one
        doc = json.loads(json.dumps(doc).replace(connect, SHOWN_ZOOKEEPER))
        command = " ".join(("zk2kraft plan --zookeeper", SHOWN_ZOOKEEPER, *book.plan_flags))
        books[f"{book.name}.md"] = render_runbook(book, doc, command=command)
        sequences.append((book, doc))
    books[f"{ROLLBACK_RUNBOOK}.md"] = render_rollback(sequences)
    return books
