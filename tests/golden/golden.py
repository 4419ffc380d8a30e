"""Golden files: what Kafka 3.9.1's own DumpLogSegments prints for the log `zk2kraft migrate`
writes from one fixed sample tree.

Why: tests must not take their expected values from the code under test (translate, the codec,
`record_to_json`). These files were produced once by `tests/golden/make_golden.py`, which runs
real Kafka (`kafka.tools.DumpLogSegments --cluster-metadata-decoder`) on the migrated log, and
were reviewed when checked in. `tests/oracle/test_golden_matches_kafka.py` re-runs Kafka on
today's log and requires the very same text, so a golden file cannot drift from what Kafka says.

What is fixed: the sample (`GOLDEN_SPECS`: seed, counts and entity kinds, hence ids, names and
secrets), the voter ids and the metadata.version. What is not, because ZooKeeper assigns it
while the tree is generated, is masked in both the golden text and the text compared with it:

- every batch's and record's CreateTime (the newest znode mtime) and the batch CRC that
  covers it;
- `RegisterBrokerRecord.brokerEpoch`, which Kafka defines as the czxid of `/brokers/ids/<id>`:
  `normalize` first checks it equals the czxid read from ZooKeeper, then masks it;
- `RegisterBrokerRecord.incarnationId` (a fresh Uuid per registration in Kafka; ours derives
  from the czxid): checked to be a 22-character Uuid, then masked.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kazoo.client import KazooClient

from samples import SampleSpec, generate_sample_cluster
from tests.support.zk import client_in_new_chroot

__all__ = [
    "GOLDEN_DIR",
    "GOLDEN_SPECS",
    "VOTERS",
    "GoldenCase",
    "GoldenTree",
    "broker_czxids",
    "golden_payloads",
    "golden_text",
    "make_tree",
    "migrate_cli",
    "migrate_golden",
    "normalize",
    "segment",
]

GOLDEN_DIR = Path(__file__).resolve().parent
ROOT = GOLDEN_DIR.parents[1]
VOTERS = (3000, 3001, 3002)


@dataclass(frozen=True)
class GoldenCase:
    """One golden file: a sample spec migrated at one metadata.version."""

    name: str
    spec: SampleSpec
    metadata_version: str

    @property
    def path(self) -> Path:
        return GOLDEN_DIR / f"{self.name}.dump.txt"


GOLDEN_SPECS: dict[str, GoldenCase] = {
    c.name: c
    for c in (
        # every entity kind, two warnings (a reassignment in flight, a recovering partition)
        GoldenCase("clean-3.9-IV0", SampleSpec.clean(topics=3, partitions_per_topic=2,
                                                       in_flight_reassignment=True,
                                                       recovering_partition=True, brokers=4),
                   "3.9-IV0"),
        # before KIP-919 and before delegation tokens: no transaction, older record versions
        GoldenCase("clean-3.6-IV1", SampleSpec.clean(topics=2, partitions_per_topic=2,
                                                       delegation_token=False), "3.6-IV1"),
    )
}


@dataclass
class GoldenTree:
    """A golden case's tree in a fresh chroot; `client` owns the ephemeral broker znodes."""

    case: GoldenCase
    connect: str
    client: KazooClient

    def close(self) -> None:
        self.client.stop()
        self.client.close()


def make_tree(zk_connect: str, case: GoldenCase) -> GoldenTree:
    """Generate the case's sample tree in a new chroot of the server at `zk_connect`."""
    connect, client = client_in_new_chroot(zk_connect, "golden")
    generate_sample_cluster(client, case.spec)
    return GoldenTree(case, connect, client)


def migrate_cli(tree: GoldenTree, work: Path) -> dict[int, Path]:
    """Run `zk2kraft migrate --cutover none` as an operator would; return the voter dirs."""
    dirs = {v: work / f"c{v}" for v in VOTERS}
    proc = subprocess.run(
        [sys.executable, "-m", "migrate.cli", "migrate", "--zookeeper", tree.connect,
         "--cutover", "none", "--spark-master", "in-process", "--quiet",
         "--metadata-version", tree.case.metadata_version,
         *[f"--voter={v}={d}" for v, d in dirs.items()]],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    return dirs


def migrate_golden(zk_connect: str, case: GoldenCase, work: Path
                   ) -> tuple[dict[int, Path], dict[int, int]]:
    """Generate the case's tree in a new chroot, migrate it through the CLI into `work`, and
    read the brokers' czxids while the generating session still holds their registrations.

    Returns the voter dirs and `broker_czxids` (what `normalize` checks the broker epochs
    against). The tree's session is closed before returning.
    """
    tree = make_tree(zk_connect, case)
    try:
        return migrate_cli(tree, work), broker_czxids(tree.client)
    finally:
        tree.close()


def segment(voter_dir: Path) -> Path:
    """The single log segment a fresh migration writes."""
    [seg] = sorted((voter_dir / "__cluster_metadata-0").glob("*.log"))
    return seg


def broker_czxids(client: KazooClient) -> dict[int, int]:
    """czxid of every `/brokers/ids/<id>` (Kafka's ZK-mode broker epoch), read with kazoo."""
    return {int(b): client.exists(f"/brokers/ids/{b}").czxid
            for b in client.get_children("/brokers/ids")}


_TIME = re.compile(r"CreateTime: -?\d+")
_CRC = re.compile(r"crc: \d+")
_DUMPING = re.compile(r"^Dumping .*/(?P<name>[^/]+)$")
_REGISTER = re.compile(r'"type":"REGISTER_BROKER_RECORD"')
_BROKER_ID = re.compile(r'"brokerId":(\d+)')
_EPOCH = re.compile(r'"brokerEpoch":(-?\d+)')
_INCARNATION = re.compile(r'"incarnationId":"([A-Za-z0-9_-]*)"')


def normalize(dump: str, czxids: Mapping[int, int]) -> str:
    """DumpLogSegments text with the ZooKeeper-assigned values checked and masked (see above).

    Raises:
        AssertionError: a broker epoch is not its registration's czxid, or an incarnation id
            is not a Uuid.
    """
    out: list[str] = []
    for line in dump.splitlines():
        m = _DUMPING.match(line)
        if m:
            out.append(f"Dumping {m.group('name')}")
            continue
        line = _CRC.sub("crc: <crc>", _TIME.sub("CreateTime: <mtime>", line))
        if _REGISTER.search(line):
            broker = int(_BROKER_ID.search(line).group(1))  # type: ignore[union-attr]
            epoch = int(_EPOCH.search(line).group(1))  # type: ignore[union-attr]
            assert epoch == czxids[broker], (broker, epoch, czxids)
            incarnation = _INCARNATION.search(line).group(1)  # type: ignore[union-attr]
            assert len(incarnation) == 22, incarnation
            line = _EPOCH.sub('"brokerEpoch":"<czxid>"', line)
            line = _INCARNATION.sub('"incarnationId":"<incarnation>"', line)
        out.append(line)
    return "\n".join(out) + "\n"


def golden_text(case: GoldenCase) -> str:
    """The checked-in golden file of `case`."""
    return case.path.read_text()


_PAYLOAD = re.compile(r"^\| offset: (?P<offset>\d+) .*? payload: (?P<json>\{.*\})$")


def golden_payloads(case: GoldenCase) -> list[dict[str, Any]]:
    """The golden records as `{"offset", "type", "version", "data"}`, the shape of
    `zk2kraft inspect --json`, with the masked values as the golden file spells them."""
    import json

    out = []
    for line in golden_text(case).splitlines():
        m = _PAYLOAD.match(line)
        if m:
            out.append({"offset": int(m.group("offset")), **json.loads(m.group("json"))})
    return out
