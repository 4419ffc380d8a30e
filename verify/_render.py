"""Render a `ParityReport` as rich tables (the only verify module that imports rich for parity).

The console is passed in (tests use `Console(file=StringIO(), width=..., color_system=None)`),
every string is literal `Text` (a config value such as `[1, 2]` is never parsed as markup), and
values go through the report's `RedactionPolicy`, strict by default, so no secret can print.
"""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from verify._report import (
    CHANGED_TITLE,
    NOT_CHECKED_TITLE,
    Difference,
    ParityReport,
    RedactionPolicy,
    format_value,
)

__all__ = ["render_parity"]

def render_parity(
    console: Console,
    report: ParityReport,
    *,
    policy: RedactionPolicy = RedactionPolicy.STRICT,
    max_rows: int = 500,
) -> None:
    """Print the verdict, what was checked, and the differences (at most `max_rows`).

    Args:
        console: where to print.
        report: the parity result.
        policy: how secret-derived values are shown (strict: `<redacted>`).
        max_rows: cap on difference rows; the rest are counted, and all are in `--json`.
    """
    if report.parity:
        besides = []
        if report.changed_by_kafka:
            besides.append(f"{len(report.changed_by_kafka)} changed by Kafka since the "
                           "migration")
        if report.not_checked:
            besides.append(f"{len(report.not_checked)} not checked")
        console.print(Text("parity: the voters' log matches ZooKeeper"
                           + (f" ({'; '.join(besides)}: listed below)" if besides else ""),
                           style="bold green"))
    else:
        n = len(report.differences)
        console.print(
            Text(f"parity: {n} difference{'s' if n != 1 else ''} between ZooKeeper and the "
                 "voters' log", style="bold red")
        )
    checked = Table(title=Text("checked"), title_justify="left")
    checked.add_column("kind")
    checked.add_column("entities", justify="right")
    checked.add_column("differences", justify="right")
    per_kind: dict[str, int] = {}
    for d in report.differences:
        per_kind[d.kind] = per_kind.get(d.kind, 0) + 1
    for kind, count in report.checked.items():
        checked.add_row(Text(kind), Text(str(count)), Text(str(per_kind.get(kind, 0))))
    for kind in per_kind:
        if kind not in report.checked:
            checked.add_row(Text(kind), Text("-"), Text(str(per_kind[kind])))
    console.print(checked)
    _entries(console, CHANGED_TITLE, report.changed_by_kafka, policy, max_rows)
    _entries(console, NOT_CHECKED_TITLE, report.not_checked, policy, max_rows)
    if report.parity:
        return
    table = Table(title=Text("differences"), title_justify="left", show_lines=False)
    table.add_column("kind", no_wrap=True)
    table.add_column("key", overflow="fold")
    table.add_column("field", overflow="fold")
    table.add_column("zookeeper", overflow="fold")
    table.add_column("quorum", overflow="fold")
    for d in report.differences[:max_rows]:
        shown = d.to_json(policy)
        table.add_row(
            Text(d.kind), Text(d.key), Text(d.field),
            Text(format_value(shown["zookeeper"])), Text(format_value(shown["quorum"])),
        )
    console.print(table)
    hidden = len(report.differences) - max_rows
    if hidden > 0:
        console.print(Text(f"... and {hidden} more (all of them are in --json)"))


def _entries(console: Console, title: str, entries: tuple[Difference, ...],
             policy: RedactionPolicy, max_rows: int) -> None:
    """A table of entries that are not differences, each with why."""
    if not entries:
        return
    table = Table(title=Text(title), title_justify="left", show_lines=False)
    for column in ("kind", "key", "field", "zookeeper", "quorum", "why"):
        table.add_column(column, overflow="fold", no_wrap=column == "kind")
    for d in entries[:max_rows]:
        shown = d.to_json(policy)
        table.add_row(Text(d.kind), Text(d.key), Text(d.field),
                      Text(format_value(shown["zookeeper"])), Text(format_value(shown["quorum"])),
                      Text(d.reason))
    console.print(table)
    if len(entries) > max_rows:
        console.print(Text(f"... and {len(entries) - max_rows} more (all of them are in --json)"))
