"""The stand-in sequence's ways back and start-over (issue 30, finding 1): every one that
discards a quorum the brokers in migration mode may have fetched from tells them to drop their
`__cluster_metadata-0`. Expected sentences are written out by hand."""

from __future__ import annotations

from pathlib import Path

from migrate.flags.standin import StandInSpec
from migrate.online.operator_sequence import operator_sequence, start_over
from migrate.translate.framing import parse_target_version
from tests.support.snapshots import CLUSTER_ID, full_snapshot, mk_broker
from zkreader import ClusterSnapshot

ZK = "zk1:2181/kafka"
SPEC = StandInSpec(3000, ("10.0.0.9", 9093), Path("/var/lib/zk2kraft/meta"),
                   {3000: ("10.0.0.9", 9093), 3001: ("c1", 9093), 3002: ("c2", 9093)})

ROLL = ("roll the brokers one at a time: each stopped, its __cluster_metadata-0 directory "
        "deleted (in its metadata.log.dir, else the first of its log.dirs; the rest of its data "
        "stays), started again, and every partition's ISR full again before the next")


def _steps() -> list[dict[str, object]]:
    seq = operator_sequence(full_snapshot(), SPEC, metadata_version=parse_target_version("3.9-IV0"),
                            zookeeper=ZK)
    steps = seq.to_json()["steps"]
    assert isinstance(steps, list)
    return steps


def test_every_way_back_after_the_controllers_ran_drops_the_brokers_metadata_copy() -> None:
    steps = _steps()
    titles = [s["title"] for s in steps]
    assert titles[2] == "Provision the controllers and start zk2kraft's stand-in"
    # steps 1 and 2: no controller ran yet, nothing was fetched
    for s in steps[:2]:
        assert "__cluster_metadata-0" not in str(s["rollback"]), s
    # steps 3 to 6: the controllers ran, the brokers in migration mode fetched from them
    for s in steps[2:6]:
        assert ROLL in str(s["rollback"]), s
    assert steps[6]["rollback"] is None  # finalise: no way back


def test_step_3s_way_back_offers_the_full_start_over_in_order() -> None:
    back = str(_steps()[2]["rollback"])
    journal = "/var/lib/zk2kraft/.zk2kraft-journal/journal.json"
    assert back.startswith(
        "before the fence (pre-copy, mirror): stop zk2kraft (Ctrl-C) and the controllers, clear "
        f"their metadata.log.dirs, /var/lib/zk2kraft/meta and zk2kraft's journal {journal}; ")
    assert "or, to start again instead, (1) stop every KRaft controller (and zk2kraft)" in back
    order = ["(1) stop every KRaft controller", f"zookeeper-shell {ZK} get /migration",
             "kraft_metadata_offset is -1", f"zookeeper-shell {ZK} delete /migration",
             "(2) re-format each controller's metadata.log.dir",
             f"(3) empty /var/lib/zk2kraft/meta and remove {journal}",
             "(4) the brokers in migration mode follow the leader of the discarded quorum",
             f"with the controllers still stopped, {ROLL}",
             "(5) run step 3's zk2kraft migrate command again"]
    at = [back.index(o) for o in order]
    assert at == sorted(at), back


def test_start_over_names_whom_the_brokers_followed() -> None:
    text = start_over(connect=ZK, standin_dir="/d", journal="/j/journal.json",
                      followed="3002 at epoch 3", rerun="run this command again")
    assert ("(4) the brokers in migration mode follow controller 3002 at epoch 3 in their own "
            "__cluster_metadata-0") in text
    assert "(5) run this command again and, once it listens on its slot" in text
    assert CLUSTER_ID not in text  # nothing here depends on the cluster


def _migrate_action(snapshot: ClusterSnapshot) -> tuple[str, list[str]]:
    seq = operator_sequence(snapshot, SPEC, metadata_version=parse_target_version("3.9-IV0"),
                            zookeeper=ZK)
    doc = seq.to_json()
    steps = doc["steps"]
    notes = doc["notes"]
    assert isinstance(steps, list) and isinstance(notes, list)
    start = next(a for a in steps[2]["actions"] if a.startswith("start zk2kraft: "))
    return start, notes


def test_the_printed_migrate_command_is_whole_with_the_inter_broker_listener() -> None:
    snap = ClusterSnapshot(cluster_id=full_snapshot().cluster_id, brokers={
        2: mk_broker(2, endpoints=[("PLAINTEXT", "b2.example", 9092, "PLAINTEXT")]),
        1: mk_broker(1, endpoints=[("PLAINTEXT", "b1.example", 9092, "PLAINTEXT")]),
        3: mk_broker(3, endpoints=[("PLAINTEXT", "fd00::3", 9092, "PLAINTEXT")])})
    start, notes = _migrate_action(snap)
    assert start == (
        "start zk2kraft: zk2kraft migrate --zookeeper zk1:2181/kafka --standin "
        "3000@10.0.0.9:9093=/var/lib/zk2kraft/meta --controller 3001@c1:9093 --controller "
        "3002@c2:9093 --metadata-version 3.9-IV0 --cutover manual --bootstrap-server "
        "b1.example:9092,b2.example:9092,[fd00::3]:9092 --json report.json --html report.html "
        "(it listens on its slot and asks for votes for up to 120 s)")
    assert any(n.startswith("--bootstrap-server lists each broker's PLAINTEXT listener as "
                            "registered in ZooKeeper (the brokers' inter-broker listener)")
               for n in notes), notes


def test_two_listeners_pick_the_plaintext_one_every_broker_advertises() -> None:
    eps = [("SASL_PLAINTEXT", "h{}", 9094, "SASL_PLAINTEXT"), ("INTERNAL", "h{}", 9092,
                                                                  "PLAINTEXT")]
    snap = ClusterSnapshot(brokers={n: mk_broker(n, endpoints=[(a, h.format(n), p, s)
                                                               for a, h, p, s in eps])
                                    for n in (1, 2)})
    start, notes = _migrate_action(snap)
    assert "--bootstrap-server h1:9092,h2:9092 --json report.json --html report.html" in start
    assert any("INTERNAL listener as registered in ZooKeeper (a PLAINTEXT listener every "
               "broker advertises" in n for n in notes), notes


def test_no_listener_without_credentials_prints_a_placeholder_and_says_why() -> None:
    snap = ClusterSnapshot(brokers={n: mk_broker(n, endpoints=[
        ("SASL_SSL", f"h{n}", 9094, "SASL_SSL")]) for n in (1, 2)})
    start, notes = _migrate_action(snap)
    assert ("--bootstrap-server <host:port of the brokers' listener the canary can reach> "
            "--json report.json --html report.html") in start
    assert any(n.startswith("--bootstrap-server: no PLAINTEXT listener is advertised by every "
                            "broker in ZooKeeper (the inter-broker listener SASL_SSL needs "
                            "credentials)") and "--command-config" in n for n in notes), notes
