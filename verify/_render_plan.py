"""Render `zk2kraft plan`'s result as rich tables: summary, blockers, warnings, record counts.

The data comes in as plain values (anything with `code`, `message`, `path` is a finding), so
this module knows nothing about how they were found and `migrate` stays the only caller that
decides. Every string is rendered as literal text, never as rich markup: a message such as
"ISR [1, 2]" must print as written. Findings never carry secret values (they name config keys
only), so nothing here needs redaction; render tests assert it anyway.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from rich.console import Console
from rich.table import Table
from rich.text import Text

from verify._render import render_parity
from verify._report import FindingLike, ParityReport

__all__ = ["FindingLike", "VoterParity", "plan_console", "render_plan"]

VoterParity = tuple[int, str, ParityReport | None]
"""(node id, directory, parity or None when the directory holds no log yet)."""


def plan_console(*, stderr: bool) -> Console:
    """The console `plan` prints its tables on: stdout, or stderr when stdout is a document."""
    return Console(stderr=stderr, highlight=False)


def _findings_table(title: str, style: str, findings: Sequence[FindingLike]) -> Table:
    table = Table(title=Text(f"{title} ({len(findings)})", style=style), title_justify="left",
                  expand=False, show_lines=False)
    table.add_column("code", style=style, no_wrap=True)
    table.add_column("znode")
    table.add_column("what", overflow="fold")
    for f in findings:
        table.add_row(Text(f.code), Text(f.path), Text(f.message))
    return table


def render_plan(
    console: Console,
    *,
    blockers: Sequence[FindingLike],
    warnings: Sequence[FindingLike],
    records: Mapping[str, int],
    brokers: int,
    topics: int,
    partitions: int,
    source: str = "",
    max_warnings: int = 200,
    samples: Mapping[str, Sequence[Mapping[str, object]]] | None = None,
    voters: Sequence[VoterParity] = (),
    title: str = "zk2kraft plan",
    records_title: str = "records migrate would write",
) -> None:
    """Print the plan: a summary line and table, the blockers, the warnings, record counts.

    Args:
        console: where to print (a fixed-width, colourless console in tests).
        blockers / warnings: the findings, already in their stable order.
        records: records `migrate` would write, by type name.
        brokers / topics / partitions: what will be migrated (pending deletions excluded).
        source: the ZooKeeper connect string shown in the summary (no credentials in it).
        max_warnings: show at most this many warnings (the JSON document has them all).
        samples: a few records per type (already redacted by the caller), shown as JSON.
        voters: the dry-run diff of each `--voter` (rendered by `render_parity`, redacted).
        title / records_title: the summary's and the record counts' headings (`migrate`
            prints the same tables under its own name).
    """
    verdict = (
        Text(f"BLOCKED: {len(blockers)} blocker(s) must be resolved before migrating",
             style="bold red")
        if blockers
        else Text("READY: no blockers", style="bold green")
    )
    summary = Table(title=Text(title, style="bold"), title_justify="left",
                    show_header=False)
    summary.add_column("item")
    summary.add_column("value", justify="right")
    if source:
        summary.add_row("zookeeper", Text(source))
    summary.add_row("brokers", str(brokers))
    summary.add_row("topics", str(topics))
    summary.add_row("partitions", str(partitions))
    summary.add_row("records", str(sum(records.values())))
    summary.add_row("blockers", str(len(blockers)))
    summary.add_row("warnings", str(len(warnings)))
    console.print(summary)
    if blockers:
        console.print(_findings_table("blockers", "red", blockers))
    if warnings:
        shown = list(warnings[:max_warnings])
        console.print(_findings_table("warnings", "yellow", shown))
        if len(warnings) > len(shown):
            console.print(Text(f"... and {len(warnings) - len(shown)} more warnings "
                               "(all of them are in the --json document)"))
    if records:
        counts = Table(title=Text(records_title, style="bold"),
                       title_justify="left")
        counts.add_column("type")
        counts.add_column("count", justify="right")
        for name in sorted(records):
            counts.add_row(Text(name), str(records[name]))
        console.print(counts)
    if samples:
        console.print(_samples_table(samples))
    for node_id, directory, parity in voters:
        console.print(Text(f"voter {node_id} ({directory})", style="bold"))
        if parity is None:
            console.print(Text("holds no metadata log yet: nothing to diff"))
        else:
            render_parity(console, parity)
    console.print(verdict)


def _samples_table(samples: Mapping[str, Sequence[Mapping[str, object]]]) -> Table:
    table = Table(title=Text("sample records (secrets redacted)", style="bold"),
                  title_justify="left")
    table.add_column("type", no_wrap=True)
    table.add_column("data", overflow="fold")
    for name, records in samples.items():
        for data in records:
            table.add_row(Text(name), Text(json.dumps(data, separators=(",", ":"), default=str)))
    return table
