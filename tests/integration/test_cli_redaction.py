"""No secret reaches stdout, stderr or a report at any verbosity (design I7, issue 7 defect 3).

kazoo logs every znode it reads at DEBUG, payload included, so `-vv` used to print SCRAM salts
and keys and encrypted broker passwords. Each command that reads ZooKeeper runs here through the
CLI, as an operator would, with `-v` and `-vv` against the `everything` sample (every entity kind,
SCRAM credentials for two users) plus a dynamic broker password encrypted as ZK-mode Kafka stores
it. The secret values are known: the generator's SCRAM salts/keys and the hand-written password.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from migrate.translate.password import encode_password
from samples import SampleSpec

pytestmark = pytest.mark.slow

ZK2KRAFT = [sys.executable, "-m", "migrate.cli"]
KEYSTORE_PASSWORD = "Kp-keystore-9f2c7e1a"  # the clear text (the voter log holds it, no output)
ENCODER_SECRET = "encoder-secret-31d8"
SALT = bytes(range(256))  # fixed so the ciphertext's parts are known
IV = bytes(range(16, 32))


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*ZK2KRAFT, *args], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "COLUMNS": "200",
                               "ZK2KRAFT_PASSWORD_ENCODER_SECRET": ENCODER_SECRET})


@pytest.fixture
def secret_cluster(sample_cluster: Any) -> tuple[Any, list[str]]:
    cluster = sample_cluster(SampleSpec.everything(topics=3, partitions_per_topic=2))
    encoded = encode_password(KEYSTORE_PASSWORD, ENCODER_SECRET, salt=SALT, iv=IV)
    fields = dict(part.split(":", 1) for part in encoded.split(","))
    cluster.client.create("/config/brokers/2", json.dumps({"version": 1, "config": {
        "listener.name.internal.ssl.keystore.password": encoded}}).encode())
    secrets = [*cluster.manifest.secrets, KEYSTORE_PASSWORD, encoded,
               fields["encryptedPassword"], fields["salt"]]
    assert len(cluster.manifest.secrets) >= 6  # three SCRAM credentials: salt, stored, server key
    return cluster, secrets


def _assert_clean(what: str, result: subprocess.CompletedProcess[str], reports: list[Path],
                  secrets: list[str]) -> None:
    texts = {"stdout": result.stdout, "stderr": result.stderr}
    texts.update({str(p): p.read_text() for p in reports if p.exists()})
    for where, text in texts.items():
        for secret in secrets:
            assert secret not in text, f"{what}: a secret appeared in {where}"


@pytest.mark.parametrize("verbosity", ["-v", "-vv"])
def test_no_secret_in_any_output_at_any_verbosity(
    verbosity: str, secret_cluster: tuple[Any, list[str]], sample_cluster: Any, tmp_path: Path
) -> None:
    cluster, secrets = secret_cluster
    connect = cluster.connect
    # verify needs a voter that holds a log: migrate a small clean cluster into one
    other = sample_cluster(SampleSpec.clean(topics=1))
    voter_ok = tmp_path / "verify-voter"
    done = _run("migrate", "--zookeeper", other.connect, "--voter", f"3000={voter_ok}",
                "--spark-master", "in-process", "--quiet")
    assert done.returncode == 0, done.stderr

    runs = {
        "snapshot": (["snapshot", "--zookeeper", connect, "--out", str(tmp_path / "snap.jsonl")],
                     [tmp_path / "snap.jsonl"]),
        "plan": (["plan", "--zookeeper", connect, "--json", str(tmp_path / "plan.json"),
                  "--html", str(tmp_path / "plan.html")],
                 [tmp_path / "plan.json", tmp_path / "plan.html"]),
        "migrate": (["migrate", "--zookeeper", connect, "--voter", f"3000={tmp_path / 'm'}",
                     "--spark-master", "in-process", "--json", str(tmp_path / "migrate.json")],
                    [tmp_path / "migrate.json"]),
        "verify": (["verify", "--zookeeper", connect, "--voter", f"3000={voter_ok}",
                    "--json", str(tmp_path / "verify.json")], [tmp_path / "verify.json"]),
    }
    for command, (args, reports) in runs.items():
        result = _run(verbosity, *args)
        # the everything sample holds blockers (plan/migrate: 1); verify finds differences (1)
        expected = {"snapshot": 0, "plan": 1, "migrate": 1, "verify": 1}[command]
        assert result.returncode == expected, (command, result.stderr[-2000:])
        if verbosity == "-vv":  # kazoo's DEBUG records are there, so the read was logged
            assert "Received response" in result.stderr, command
        assert "INFO" in result.stderr, command
        _assert_clean(f"{command} {verbosity}", result, reports, secrets)
    assert not (tmp_path / "m" / "__cluster_metadata-0").exists()  # blocked: nothing written
