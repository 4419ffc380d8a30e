"""`--command-config`: Kafka's Java client properties mapped to librdkafka's (hand-written pairs
from the two clients' documented names), and the canary's gap arithmetic."""

from __future__ import annotations

from pathlib import Path

import pytest

from migrate.errors import BadFlagError
from migrate.flags.client_config import librdkafka_config, read_properties
from migrate.online.canary import check_bootstrap_servers
from migrate.online.canary_tally import _gap


def _file(tmp_path: Path, text: str) -> str:
    p = tmp_path / "client.properties"
    p.write_text(text)
    return str(p)


def test_sasl_scram_over_ssl_with_a_pem_truststore(tmp_path: Path) -> None:
    path = _file(tmp_path, """# admin client
security.protocol=SASL_SSL
sasl.mechanism = SCRAM-SHA-512
sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \\
    username="ops" password="s3cr\\"et";
ssl.truststore.type=PEM
ssl.truststore.location=/etc/kafka/ca.pem
ssl.endpoint.identification.algorithm=
request.timeout.ms: 30000
""")
    config, ignored = librdkafka_config(read_properties(path, flag="--command-config"), path)
    assert config == {
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.username": "ops",
        "sasl.password": 's3cr"et',
        "ssl.ca.location": "/etc/kafka/ca.pem",
        "ssl.endpoint.identification.algorithm": "",
    }
    assert ignored == []


def test_pkcs12_keystore_maps_and_unknown_keys_are_named(tmp_path: Path) -> None:
    path = _file(tmp_path, "security.protocol=SSL\nssl.keystore.location=/k/client.p12\n"
                           "ssl.keystore.password=pw\nssl.truststore.location=/k/ca.crt\n"
                           "linger.ms=5\n")
    config, ignored = librdkafka_config(read_properties(path, flag="--command-config"), path)
    assert config == {"security.protocol": "SSL", "ssl.keystore.location": "/k/client.p12",
                      "ssl.keystore.password": "pw", "ssl.ca.location": "/k/ca.crt"}
    assert ignored == ["linger.ms"]


def test_pem_keystore_is_certificate_and_key(tmp_path: Path) -> None:
    path = _file(tmp_path, "ssl.keystore.type=PEM\nssl.keystore.location=/k/me.pem\n")
    config, _ = librdkafka_config(read_properties(path, flag="--command-config"), path)
    assert config == {"ssl.certificate.location": "/k/me.pem", "ssl.key.location": "/k/me.pem"}


def test_jks_stores_are_refused_naming_the_key_and_the_fix(tmp_path: Path) -> None:
    path = _file(tmp_path, "ssl.truststore.location=/k/truststore.jks\n")
    with pytest.raises(BadFlagError, match=r"ssl.truststore.location is a JKS store.*PEM"):
        librdkafka_config(read_properties(path, flag="--command-config"), path)
    path = _file(tmp_path, "ssl.keystore.location=/k/keystore.jks\nssl.keystore.password=pw9\n")
    with pytest.raises(BadFlagError, match=r"ssl.keystore.location is a JKS store.*PKCS12") as e:
        librdkafka_config(read_properties(path, flag="--command-config"), path)
    assert "pw9" not in str(e.value)


def test_plain_login_without_password_is_refused_without_echoing_it(tmp_path: Path) -> None:
    path = _file(tmp_path, 'sasl.jaas.config=org.apache.kafka.common.security.plain.'
                           'PlainLoginModule required username="ops";\n')
    with pytest.raises(BadFlagError, match="names no username and password"):
        librdkafka_config(read_properties(path, flag="--command-config"), path)


def test_unreadable_file_is_a_bad_flag(tmp_path: Path) -> None:
    with pytest.raises(BadFlagError, match="--command-config .*cannot read it"):
        read_properties(str(tmp_path / "missing.properties"), flag="--command-config")


def test_gap_is_the_longest_one_ending_after_t0() -> None:
    # served at 0.0, 0.1, 0.2 (before t0 = 0.25), then 3.2, 3.3, and a 0.5 s hiccup to 3.8
    times = [0.0, 0.1, 0.2, 3.2, 3.3, 3.8]
    ms, start, end = _gap(times, 0.25)  # type: ignore[misc]
    assert (round(ms), start, end) == (3000, 0.2, 3.2)
    assert _gap([0.0, 1.0], 2.0) is None  # nothing after t0
    ms, start, end = _gap([0.0, 5.0, 5.1, 9.0], 5.05)  # type: ignore[misc]
    assert (round(ms), start, end) == (3900, 5.1, 9.0)


@pytest.mark.parametrize("value", ["b1:9092", "b1:9092, b2:9093", "[::1]:9092",
                                   "SASL_SSL://b1.example.com:9093,PLAINTEXT://10.0.0.2:9092"])
def test_bootstrap_servers_kafka_clients_take_are_accepted(value: str) -> None:
    check_bootstrap_servers(value)


@pytest.mark.parametrize(("value", "problem"), [
    ("b1", "--bootstrap-server 'b1': expected HOST:PORT"),
    ("b1:9092,b2", "--bootstrap-server 'b2': expected HOST:PORT (in 'b1:9092,b2')"),
    ("b1:65536", "--bootstrap-server 'b1:65536': port must be 1..65535"),
    (" , ", "expected HOST:PORT[,HOST:PORT]"),
])
def test_malformed_bootstrap_servers_name_the_entry(value: str, problem: str) -> None:
    with pytest.raises(BadFlagError) as err:
        check_bootstrap_servers(value)
    assert problem in str(err.value)
