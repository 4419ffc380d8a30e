"""The stand-in on a secured controller listener, as Kafka configures it: real 3.9.1 controllers
follow it and take over from it, exactly as over PLAINTEXT, with
* TLS: `listener.security.protocol.map=CONTROLLER:SSL`, PEM key and trust stores and
  `ssl.client.auth=required`;
* SASL/PLAIN: `CONTROLLER:SASL_PLAINTEXT`, `sasl.mechanism.controller.protocol=PLAIN` and the
  listener's PlainLoginModule (the stand-in checks the controllers' logins and logs in to them).

The certificates come from the same throwaway CA as the ZooKeeper TLS tests (valid for
127.0.0.1); the stand-in presents a client certificate when it connects to the controllers and
requires theirs when they connect to it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.test_zkreader_tls import make_pki
from tests.support.standin import StandInQuorum, standin_quorum
from writers import MetadataRecord

pytestmark = [pytest.mark.oracle, pytest.mark.slow]


def _commit_then_hand_over(q: StandInQuorum) -> dict[str, int]:
    """Commit one record through the stand-in, resign, and wait until the real controller it
    handed over to is active; returns the requests the stand-in served, by API name."""
    result = q.standin.append_records(
        [MetadataRecord("FEATURE_LEVEL_RECORD", 0,
                        {"name": "metadata.version", "featureLevel": 21})],
        timestamp_ms=1_700_000_000_000)
    assert q.standin.durable_offset == result.last_offset == 1
    handover = q.standin.resign()
    assert handover.new_leader in (3001, 3002) and handover.new_epoch == 2
    q.controller(handover.new_leader).wait_for_log(r"Becoming the active controller", 60)
    return dict(q.standin.requests_served)


def test_controllers_follow_the_standin_over_tls_and_take_over(tmp_path: Path) -> None:
    pki_dir = tmp_path / "pki"
    pki_dir.mkdir()
    pki = dict(make_pki(pki_dir))
    pki["server_keystore"] = pki_dir / "server.keystore.pem"
    with standin_quorum(tmp_path / "q", pki=pki) as q:
        for c in q.controllers:
            assert "CONTROLLER:SSL" in c.config_path.read_text()
        served = _commit_then_hand_over(q)
    # everything the controllers sent the stand-in arrived over TLS (the listener has no
    # plaintext side) and was answered
    assert served.get("Fetch", 0) >= 2 and served.get("ApiVersions", 0) >= 2


def test_controllers_follow_the_standin_over_sasl_plain_and_take_over(tmp_path: Path) -> None:
    with standin_quorum(tmp_path, sasl_plain=("controller", "s3cret-pw")) as q:
        for c in q.controllers:
            assert "CONTROLLER:SASL_PLAINTEXT" in c.config_path.read_text()
        served = _commit_then_hand_over(q)
    # every controller connection to the stand-in logged in first
    assert served.get("SaslHandshake", 0) >= 2 and served.get("SaslAuthenticate", 0) >= 2
    assert served.get("Fetch", 0) >= 2
