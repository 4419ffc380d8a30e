"""render_plan on a fixed-width, colourless console: content, literal text, no markup."""

from __future__ import annotations

import io

from rich.console import Console

from migrate.preflight.findings import Finding
from verify import render_plan


def _render(**kw: object) -> str:
    buf = io.StringIO()
    console = Console(file=buf, width=160, color_system=None)
    args: dict[str, object] = {"blockers": [], "warnings": [], "records": {}, "brokers": 3,
                               "topics": 1, "partitions": 2}
    args.update(kw)
    render_plan(console, **args)  # type: ignore[arg-type]
    return buf.getvalue()


def test_ready_plan_shows_summary_and_counts() -> None:
    out = _render(records={"TOPIC_RECORD": 1, "PARTITION_RECORD": 2}, source="zk:2181/kafka")
    assert "READY" in out and "BLOCKED" not in out
    assert "zk:2181/kafka" in out
    assert "TOPIC_RECORD" in out and "PARTITION_RECORD" in out


def test_findings_are_printed_literally_with_code_and_path() -> None:
    blocker = Finding("TOPIC_WITHOUT_ID", "topic 'x' has no [bold]topic_id[/bold]",
                      "/brokers/topics/x")
    warning = Finding("LEADER_NOT_IN_ISR", "x-0: leader 3 is not in ISR [1, 2]",
                      "/brokers/topics/x/partitions/0/state")
    out = _render(blockers=[blocker], warnings=[warning])
    assert "BLOCKED: 1 blocker(s)" in out
    assert "[bold]topic_id[/bold]" in out  # not interpreted as markup
    assert "ISR [1, 2]" in out
    assert "/brokers/topics/x/partitions/0/state" in out


def test_warnings_are_capped_with_a_pointer_to_the_json() -> None:
    warnings = [Finding("PARTITION_OFFLINE", f"p{i}", f"/p/{i}") for i in range(5)]
    out = _render(warnings=warnings, max_warnings=2)
    assert "/p/1" in out and "/p/2" not in out
    assert "3 more warnings" in out


def test_samples_are_printed_as_json() -> None:
    sample = {"name": "orders", "topicId": "tGCUt6tCR3a2R1NDlMdp3Q"}
    out = _render(samples={"TOPIC_RECORD": [sample]})
    assert "sample records" in out
    assert '{"name":"orders","topicId":"tGCUt6tCR3a2R1NDlMdp3Q"}' in out
