"""The stand-in transport's flags: syntax, the voter set, exclusivity with --voter, security."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pytest

from migrate.errors import BadFlagError
from migrate.flags.standin import (
    check_standin_flags,
    parse_controller,
    parse_standin,
    quorum_voter_ids,
)
from migrate.online.transport import bootstrap_records
from writers import parse_metadata_version

STANDIN = (3000, "10.0.0.5", 9093, Path("/var/lib/zk2kraft/meta"))


def test_parse_standin_and_controller() -> None:
    assert parse_standin("3000@10.0.0.5:9093=/var/meta") == (3000, "10.0.0.5", 9093,
                                                            Path("/var/meta"))
    assert parse_standin("7@[::1]:9093=/m") == (7, "::1", 9093, Path("/m"))
    assert parse_controller("3001@c1.example:9093") == (3001, "c1.example", 9093)
    for bad in ["3000@h:9093", "3000=/m", "h:9093=/m", "3000@h=/m", "3000@h:0=/m",
                "x@h:1=/m", "3000@h:70000=/m"]:
        with pytest.raises(argparse.ArgumentTypeError, match="--standin"):
            parse_standin(bad)
    with pytest.raises(argparse.ArgumentTypeError, match="--controller"):
        parse_controller("3001:9093")


def test_voter_set_from_controllers_or_quorum_voters() -> None:
    spec = check_standin_flags(STANDIN, [(3001, "c1", 9093), (3002, "c2", 9093)], None, None,
                               voters_given=False, cutover="now")
    assert spec is not None
    assert dict(spec.voters) == {3000: ("10.0.0.5", 9093), 3001: ("c1", 9093),
                                 3002: ("c2", 9093)}
    spec = check_standin_flags(STANDIN, None, "3000@10.0.0.5:9093,3001@c1:9093,3002@c2:9093",
                               None, voters_given=False, cutover="manual")
    assert spec is not None and sorted(spec.voters) == [3000, 3001, 3002]
    assert spec.to_json()["kind"] == "standin"
    assert quorum_voter_ids("1@a:1,2@b:2") == [1, 2]


@pytest.mark.parametrize(
    ("controllers", "quorum", "voters_given", "cutover", "message"),
    [
        ([(3001, "c1", 1)], None, True, "now", "exclusive"),
        ([(3001, "c1", 1)], None, False, "none", "needs --cutover now or manual"),
        (None, None, False, "now", "one of the two"),
        ([(3001, "c1", 1)], "3000@10.0.0.5:9093,3001@c1:1", False, "now", "one of the two"),
        ([(3000, "c1", 1)], None, False, "now", "node id 3000 given twice"),
        ([(3001, "c1", 1), (3001, "c2", 1)], None, False, "now", "node id 3001 given twice"),
        (None, "3000@10.0.0.6:9093,3001@c1:1", False, "now", "must name the stand-in"),
        (None, "3001@c1:1,3002@c2:1", False, "now", "no voter 3000"),
        (None, "3000@10.0.0.5:9093", False, "now", "at least one real controller"),
        (None, "3000@10.0.0.5:9093,3001@c1", False, "now", "expected ID@HOST:PORT"),
    ],
)
def test_refusals(controllers: list[tuple[int, str, int]] | None, quorum: str | None,
                  voters_given: bool, cutover: str, message: str) -> None:
    with pytest.raises(BadFlagError, match=message):
        check_standin_flags(STANDIN, controllers, quorum, None, voters_given=voters_given,
                            cutover=cutover)


def test_controller_flags_without_standin_are_refused() -> None:
    assert check_standin_flags(None, None, None, None, voters_given=True, cutover="now") is None
    with pytest.raises(BadFlagError, match="--controller belongs to the stand-in"):
        check_standin_flags(None, [(3001, "c", 1)], None, None, voters_given=True,
                            cutover="now")


def test_controller_config_security(tmp_path: Path) -> None:
    conf = tmp_path / "controller.properties"
    conf.write_text(
        "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"
        "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
        'username="ctl" password="s3cret" user_ctl="s3cret" user_admin="other";\n')
    spec = check_standin_flags(STANDIN, [(3001, "c1", 1)], None, str(conf),
                               voters_given=False, cutover="now")
    assert spec is not None
    assert spec.sasl_client == ("ctl", "s3cret")
    assert dict(spec.sasl_users or {}) == {"ctl": "s3cret", "admin": "other"}
    assert "s3cret" not in repr(spec) and "s3cret" not in str(spec.to_json())
    for text, message in [
        ("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-512\n", "PLAIN only"),
        ("security.protocol=SSL\nssl.keystore.type=JKS\nssl.keystore.location=/k.jks\n",
         "PEM stores only"),
        ("security.protocol=SSL\n", "needs ssl.keystore.location"),
        ("security.protocol=SSL\nssl.keystore.location=/nope.pem\n"
         "ssl.truststore.location=/nope-ca.pem\n", "cannot load the PEM stores"),
        ("security.protocol=KERBEROS\n", "is not one of"),
    ]:
        conf.write_text(text)
        with pytest.raises(BadFlagError, match=message):
            check_standin_flags(STANDIN, [(3001, "c1", 1)], None, str(conf),
                                voters_given=False, cutover="now")


def test_unreadable_controller_config_names_its_own_flag(tmp_path: Path) -> None:
    missing = str(tmp_path / "missing.properties")
    with pytest.raises(BadFlagError, match=r"^--controller-config .*missing\.properties: "
                       "cannot read it"):
        check_standin_flags(STANDIN, [(3001, "c1", 1)], None, missing, voters_given=False,
                            cutover="now")


def test_bootstrap_is_what_kafka_writes_on_an_empty_migration_log() -> None:
    # Kafka 3.9 ActivationRecordsGenerator, empty log, migration enabled, transactions
    # supported: Begin("Bootstrap records"), metadata.version, ZkMigrationState PRE_MIGRATION
    # (value 2 since 3.5), End.
    records = bootstrap_records(parse_metadata_version("3.9-IV0"))
    assert [r.type for r in records] == ["BEGIN_TRANSACTION_RECORD", "FEATURE_LEVEL_RECORD",
                                         "ZK_MIGRATION_STATE_RECORD", "END_TRANSACTION_RECORD"]
    assert records[0].data == {"name": "Bootstrap records"}
    assert records[1].data == {"name": "metadata.version", "featureLevel": 21}
    assert records[2].data == {"zkMigrationState": 2}


def test_cli_exit_2_for_mixed_transports(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "migrate.cli", "migrate", "--zookeeper", "127.0.0.1:1",
         "--cutover", "now", "--voter", f"3000={tmp_path / 'a'}",
         "--standin", f"3000@127.0.0.1:9093={tmp_path / 'b'}", "--controller", "3001@h:1"],
        capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "--standin and --voter are two transports" in done.stderr
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_negative_broker_wait_is_refused_before_anything_is_touched(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "migrate.cli", "migrate", "--zookeeper", "127.0.0.1:1",
         "--cutover", "now", "--broker-wait", "-1",
         "--standin", f"3000@127.0.0.1:9093={tmp_path / 'b'}", "--controller", "3001@h:1"],
        capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    assert "--broker-wait: must be >= 0 seconds" in done.stderr
    assert not (tmp_path / "b").exists()


def test_controller_config_timing_defaults_to_kafkas_and_reads_the_controllers_own(
        tmp_path: Path) -> None:
    """Kafka 3.9's defaults: controller.quorum.fetch.timeout.ms 2000, broker.session.timeout.ms
    9000; a controller's own properties file names both the same way."""
    none = check_standin_flags(STANDIN, [(3001, "c1", 1)], None, None, voters_given=False,
                               cutover="now")
    assert none is not None
    assert (none.fetch_timeout_ms, none.broker_session_timeout_ms) == (2000, 9000)
    conf = tmp_path / "controller.properties"
    conf.write_text("process.roles=controller\ncontroller.quorum.fetch.timeout.ms=30000\n"
                    "broker.session.timeout.ms=18000\n")
    spec = check_standin_flags(STANDIN, [(3001, "c1", 1)], None, str(conf),
                               voters_given=False, cutover="now")
    assert spec is not None and spec.protocol == "PLAINTEXT"
    assert (spec.fetch_timeout_ms, spec.broker_session_timeout_ms) == (30000, 18000)
    for bad in ("controller.quorum.fetch.timeout.ms=0", "broker.session.timeout.ms=9s"):
        conf.write_text(bad + "\n")
        with pytest.raises(BadFlagError, match=rf"^--controller-config .*: {bad.split('=')[0]}="):
            check_standin_flags(STANDIN, [(3001, "c1", 1)], None, str(conf),
                                voters_given=False, cutover="now")
