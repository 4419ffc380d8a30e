"""Rendering: fixed-width colourless tables, the HTML page, 0600 files — and no secret anywhere."""

from __future__ import annotations

import io
import os
import re
import stat
from pathlib import Path

import pytest
from rich.console import Console

from migrate.preflight.findings import Finding
from verify import (
    Difference,
    ParityReport,
    RedactionPolicy,
    Report,
    format_value,
    is_sensitive_config,
    render_html,
    render_parity,
    write_report_file,
)

DIGEST = "sha256:" + "ab" * 32


def report() -> ParityReport:
    return ParityReport(
        differences=(
            Difference("partition", "orders-3", "isr", [1, 2, 3], [1, 2]),
            Difference("topic", "fresh", "<exists>", True, False),
            Difference("topic_config", "orders", "retention.ms", "[bold]2000", "1000"),
            Difference("scram", "alice/SCRAM-SHA-256", "credential", DIGEST,
                       "sha256:" + "cd" * 32, secret=True),
            Difference("broker_config", "1", "ssl.keystore.password", "<present>", None,
                       secret=True),
        ),
        checked={"partition": 12, "topic": 2, "topic_config": 1, "scram": 1,
                 "broker_config": 1},
    )


def render(rep: ParityReport, **kw: object) -> str:
    out = io.StringIO()
    console = Console(file=out, width=120, color_system=None, force_terminal=False)
    render_parity(console, rep, **kw)  # type: ignore[arg-type]
    return out.getvalue()


def test_differences_table_fixed_width_and_literal_text() -> None:
    text = render(report())
    assert "parity: 5 differences" in text
    assert all(len(line) <= 120 for line in text.splitlines())
    row = next(line for line in text.splitlines() if "orders-3" in line)
    assert re.search(r"partition\s*│\s*orders-3\s*│\s*isr\s*│\s*\[1, 2, 3\]\s*│\s*\[1, 2\]", row)
    assert "[bold]2000" in text  # printed as written, never parsed as markup
    assert "(absent)" in text


def test_strict_policy_hides_digests_normal_shows_a_prefix() -> None:
    strict = render(report())
    assert "sha256" not in strict and "abab" not in strict and "<redacted>" in strict
    normal = render(report(), policy=RedactionPolicy.NORMAL)
    assert "sha256:abababab…" in normal and "ab" * 32 not in normal
    assert RedactionPolicy.DISABLED.show(DIGEST, secret=True) == DIGEST
    assert RedactionPolicy.NORMAL.show("raw-password", secret=True) == "<redacted>"


def test_parity_verdict_and_row_cap() -> None:
    ok = render(ParityReport((), {"topic": 3}))
    assert "matches ZooKeeper" in ok and "differences" in ok
    many = ParityReport(tuple(Difference("topic", f"t{i}", "topicId", "a", "b")
                              for i in range(30)), {"topic": 30})
    assert "... and 20 more" in render(many, max_rows=10)


def test_json_document_shape_and_redaction() -> None:
    doc = report().to_json()
    assert set(doc) == {"parity", "differences", "changed_by_kafka", "not_checked", "checked"}
    assert doc["parity"] is False
    assert doc["changed_by_kafka"] == [] and doc["not_checked"] == []
    first = doc["differences"][0]  # type: ignore[index]
    assert first == {"kind": "partition", "key": "orders-3", "field": "isr",
                     "zookeeper": [1, 2, 3], "quorum": [1, 2]}
    assert "sha256" not in str(doc)


def test_changed_by_kafka_and_not_checked_are_listed_apart_and_keep_parity() -> None:
    rep = ParityReport.of(
        (Difference("producer_ids", "cluster", "nextProducerId", 7000, 6000,
                    verdict="changed_by_kafka", reason="a KRaft controller allocated a block"),
         Difference("voter_files", "3000", "quorum-state currentVoters",
                    "not checked: pass --quorum-voters", [3000, 3001, 3002],
                    verdict="not_checked", reason="voters besides the --voter ids")),
        {"producer_ids": 1})
    assert rep.parity and rep.differences == ()
    doc = rep.to_json()
    assert doc["differences"] == []
    assert doc["changed_by_kafka"] == [{
        "kind": "producer_ids", "key": "cluster", "field": "nextProducerId",
        "zookeeper": 7000, "quorum": 6000, "reason": "a KRaft controller allocated a block"}]
    assert [d["key"] for d in doc["not_checked"]] == ["3000"]  # type: ignore[index,union-attr]
    text = render(rep)
    assert ("matches ZooKeeper (1 changed by Kafka since the migration; 1 not checked: listed "
            "below)") in text
    assert "changed by Kafka since the migration (not differences)" in text
    assert "not checked (not differences)" in text and "7000" in text
    page = render_html(Report(title="t", parity=rep))
    assert "changed by Kafka since the migration" in page and "not checked" in page


def test_sensitive_config_names() -> None:
    for name in ("ssl.keystore.password", "listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config",
                 "ssl.keystore.key", "password.encoder.secret", "delegation.token.secret.key"):
        assert is_sensitive_config(name), name
    for name in ("retention.ms", "max.connections", "ssl.enabled.protocols"):
        assert not is_sensitive_config(name), name


def test_format_value() -> None:
    assert format_value(None) == "(absent)"
    assert format_value(1024.0) == "1024" and format_value(0.5) == "0.5"
    assert format_value(True) == "yes" and format_value([1, [2]]) == "[1, [2]]"


def test_html_page_is_self_contained_escaped_and_redacted() -> None:
    page = render_html(Report(
        title="zk2kraft plan <cluster>",
        summary={"brokers": 3, "topics": 2},
        blockers=[Finding("TOPIC_WITHOUT_ID", "topic '<script>alert(1)</script>' has no id",
                          "/brokers/topics/<script>")],
        warnings=[Finding("PENDING_DELETION", "topic gone is pending deletion",
                          "/admin/delete_topics/gone")],
        records={"TOPIC_RECORD": 2},
        parity=report(),
    ))
    assert page.startswith("<!DOCTYPE html>")
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert not re.search(r"""(src|href)\s*=|@import|url\(|https?://""", page)
    assert "1 blocker(s)" in page and "TOPIC_RECORD" in page and "orders-3" in page
    assert "sha256" not in page and "abab" not in page and "&lt;redacted&gt;" in page


def test_write_report_file_is_0600_and_atomic(tmp_path: Path) -> None:
    target = tmp_path / "report.html"
    old = os.umask(0)
    try:
        write_report_file(target, "<p>one</p>")
    finally:
        os.umask(old)
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    write_report_file(target, "<p>two</p>")
    assert target.read_text() == "<p>two</p>"
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]  # no temp file left
    with pytest.raises(OSError):
        write_report_file(tmp_path / "missing" / "x.html", "x")
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]
