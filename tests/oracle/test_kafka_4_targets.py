"""Each Kafka 4 line's default metadata.version, judged by a real Kafka 4.4.0 controller.

`--target-kafka 4.N` writes that release's own LATEST_PRODUCTION (Kafka 4.4.0's
`MetadataVersion`: 4.2-IV1 is level 29, 4.3-IV0 level 30, 4.4-IV2 level 33; `fromVersionString`
maps "4.N" to them), so the migrated cluster is at the level `kafka-storage format` of that
release would give it. The check is Kafka's: a 4.4.0 controller starts on the migrated voter
directory without `kafka-storage format`, becomes the leader with no ERROR logged, and
`kafka-features describe` (FeatureCommand) reports the finalized level the log carries. Run on
2026-11-29 for 4.2, 4.3 and 4.4 (docs/design/offline.md); CI keeps the 4.4 case (one controller
start, about 30 s), the 4.1.1 rehearsal covers 4.1.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from samples import SampleSpec
from tests.support.kraft import KraftNode, kafka_dist, run_tool
from tests.support.ports import free_port

pytestmark = [pytest.mark.slow, pytest.mark.oracle]

KAFKA_44 = kafka_dist("4.4")
CONTROLLER = 3000
# what each line's default must be, from Kafka 4.4.0's MetadataVersion (hand-copied)
LEVELS = {"4.2": ("4.2-IV1", 29), "4.3": ("4.3-IV0", 30), "4.4": ("4.4-IV2", 33)}
TARGETS = [t for t in os.environ.get("ZK2KRAFT_KAFKA4_TARGETS", "4.4").split(",") if t]


@pytest.mark.parametrize("target", TARGETS)
def test_a_kafka_4_4_controller_starts_on_the_default_level_of_each_line(
        sample_cluster: Callable[..., Any], tmp_path: Path, target: str) -> None:
    KAFKA_44.classpath()  # the jars must be there: fail naming the fetch command, not skip
    name, level = LEVELS[target]
    # without dynamic broker configs and tokens: the sample's broker config holds a static key
    # (Kafka logs ERROR "Non-dynamic configs will be ignored") and tokens need the controller's
    # delegation.token.secret.key; the rehearsals judge those entities, this the level only
    cluster = sample_cluster(SampleSpec.clean(topics=2, partitions_per_topic=2, configs=False,
                                              delegation_token=False))
    for broker in cluster.client.get_children("/brokers/ids"):  # every broker stopped
        cluster.client.delete(f"/brokers/ids/{broker}")
    cluster.client.delete("/controller")
    voter = tmp_path / "c3000"
    migrated = subprocess.run(
        [sys.executable, "-m", "migrate.cli", "migrate", "--zookeeper", cluster.connect,
         "--offline", "--target-kafka", target, f"--voter={CONTROLLER}={voter}", "--quiet",
         "--spark-master", "in-process"], capture_output=True, text=True, timeout=600)
    assert migrated.returncode == 0, migrated.stdout + migrated.stderr
    inspected = subprocess.run([sys.executable, "-m", "migrate.cli", "inspect", str(voter),
                                "--json"], capture_output=True, text=True, timeout=300)
    first = json.loads(inspected.stdout.splitlines()[0])
    assert first["data"] == {"name": "metadata.version", "featureLevel": level}

    port = free_port()
    with KraftNode(tmp_path / "kraft", KAFKA_44, node_id=CONTROLLER, role="controller",
                   quorum={CONTROLLER: port}, log_dirs=voter) as controller:
        controller.wait_for_log(r"Completed transition to Leader\(", timeout=120)
        described = run_tool(KAFKA_44, "org.apache.kafka.tools.FeatureCommand",
                             "--bootstrap-controller", f"127.0.0.1:{port}", "describe").stdout
        errors = controller.errors()
    assert errors == [], "\n".join(errors)
    line = next(ln for ln in described.splitlines() if "Feature: metadata.version" in ln)
    assert re.search(rf"FinalizedVersionLevel:\s*{re.escape(name)}\b", line), described
    assert re.search(r"SupportedMaxVersion:\s*4\.4-IV2\b", line), described
