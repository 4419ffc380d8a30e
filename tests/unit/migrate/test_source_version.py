"""`plan`'s source version: bounds from the znodes' formats (Kafka facts in the module under
test's docstring, from docs/reference: /feature v2 at IBP >= 3.3, /brokers/ids v5 at IBP >= 2.7,
topic ids at IBP >= 2.8, /controller v2 from Kafka 3.4)."""

from __future__ import annotations

from dataclasses import replace

from migrate.preflight.checks import preflight
from migrate.preflight.source_version import source_version
from tests.unit.migrate.test_preflight import EPHEMERAL, STAT, broker, clean
from zkreader import ControllerZnode, FeatureZnode


def _warned(snapshot: object) -> list[str]:
    return [f.code for f in preflight(snapshot).warnings  # type: ignore[arg-type]
            if f.code == "BROKER_LOGS_MAY_LACK_TOPIC_IDS"]


def test_a_3_4_controller_and_ibp_3_3_rule_out_brokers_before_3_0() -> None:
    snap = clean(feature=FeatureZnode(2, 1, {}, STAT))  # its /controller is version 2
    found = source_version(snap)
    assert found.describe() == ("Kafka 3.4 or later, inter.broker.protocol.version 3.3 or "
                                "later")
    assert found.online_possible is False  # IBP 3.6 is not proven
    assert _warned(snap) == []


def test_a_2_8_tree_is_bounded_and_warned_about() -> None:
    snap = clean(feature=FeatureZnode(1, 1, {}, STAT),
                 controller=ControllerZnode(1, 1, 0, -1, EPHEMERAL))
    found = source_version(snap)
    assert found.describe() == ("Kafka 2.8 or later, before 3.4, inter.broker.protocol.version "
                                "2.8 or later, before 3.3")
    assert _warned(snap) == ["BROKER_LOGS_MAY_LACK_TOPIC_IDS"]


def test_nothing_known_is_said_so_and_warned_about() -> None:
    snap = clean(controller=None, brokers={},
                 topics={"t": replace(clean().topics["orders"], name="t", topic_id=None)})
    found = source_version(snap)
    assert found.describe() == "Kafka unknown, inter.broker.protocol.version unknown"
    assert found.may_predate_3_0


def test_mixed_registration_versions_set_no_upper_bound() -> None:
    old = replace(broker(2), json_version=4)
    snap = clean(brokers={1: broker(1), 2: old}, controller=None)
    found = source_version(snap)
    assert found.ibp_below is None and found.ibp_at_least == (2, 8)
    all_old = clean(brokers={1: replace(broker(1), json_version=4)}, controller=None,
                    feature=FeatureZnode(2, 1, {}, STAT))
    contradicted = source_version(all_old)
    assert contradicted.ibp_at_least == (3, 3) and contradicted.ibp_below is None
    assert any("contradicts" in e for e in contradicted.evidence)


def test_online_a_broker_older_than_the_metadata_version_blocks_saying_its_own_level() -> None:
    from migrate.preflight.broker_release import BrokerRelease
    from migrate.preflight.source_version import (
        BROKER_OLDER_THAN_METADATA_VERSION,
        brokers_below_metadata_version,
    )
    from writers import parse_metadata_version

    brokers = [BrokerRelease(1, "a:9092", (3, 6), (3, 7)),   # 3.6
               BrokerRelease(2, "b:9092", (3, 9), None),     # 3.9 or later
               BrokerRelease(3, "c:9092", (3, 4), (3, 5)),   # 3.4
               BrokerRelease(4, "d:9092", error="timed out")]
    found = list(brokers_below_metadata_version(brokers, parse_metadata_version("3.9-IV0")))
    assert [(f.code, f.path) for f in found] == [
        (BROKER_OLDER_THAN_METADATA_VERSION, "/brokers/ids/1"),
        (BROKER_OLDER_THAN_METADATA_VERSION, "/brokers/ids/3")]
    assert "give --metadata-version 3.6-IV2 (the brokers' own line's level" in found[0].message
    assert "upgrade every broker to Kafka 3.6 or later first" in found[1].message
    # at the 3.6 brokers' own level nothing blocks but the 3.4 one
    found = list(brokers_below_metadata_version(brokers, parse_metadata_version("3.6-IV2")))
    assert [f.path for f in found] == ["/brokers/ids/3"]
