"""One self-contained HTML page for a report: what an operator attaches to a change ticket.

No external assets (inline CSS, no scripts, no fonts, no links out), every value escaped with
`html.escape`, and values pass the report's `RedactionPolicy` (strict by default), so the page is
safe to mail around. `write_report_file` writes it (or any report text) with mode 0600 from the
first byte, atomically: a temporary file in the same directory, fsync, rename.
"""

from __future__ import annotations

import html
import os
from collections.abc import Mapping, Sequence

from verify._report import (
    CHANGED_TITLE,
    NOT_CHECKED_TITLE,
    FindingLike,
    JsonValue,
    ParityReport,
    RedactionPolicy,
    Report,
    format_value,
)
from verify._window import WindowParts
from writers import atomic_write

__all__ = ["render_fleet_html", "render_html", "write_report_file"]

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:2em;color:#222}
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:1.6em}
table{border-collapse:collapse;margin:.5em 0}
th,td{border:1px solid #ccc;padding:.25em .6em;text-align:left;vertical-align:top}
th{background:#f3f3f3}td.num{text-align:right}
.ok{color:#1a7f37;font-weight:bold}.bad{color:#cf222e;font-weight:bold}
.warn{color:#9a6700;font-weight:bold}code{font-family:ui-monospace,monospace}
svg.window text{font-size:11px}.na{color:#777}
"""

# one colour per window part (the terminal's colours, as hex), in stacking order
_PART_COLOURS = {"tool": "#2da44e", "migration_znode": "#1b9aaa", "election": "#0969da",
                 "kafka_claim": "#8250df", "reconcile": "#bf8700", "broker_rpcs": "#cf222e"}
# a split part's sub-parts, drawn over it (light and dark, alternating, so neighbours differ)
_SUB_SHADES = ("#cfe3ff", "#0a3069", "#8cc0ff", "#033d8b", "#54aeff", "#218bff", "#b6e3ff",
               "#002155")


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _page_start(title: str) -> list[str]:
    """The lines every page starts with: the self-contained head (inline CSS) and the title."""
    return [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{_e(title)}</h1>",
    ]


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]], *, numeric: int = -1) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in headers)
    body = []
    for row in rows:
        cells = "".join(
            f'<td class="num">{_e(c)}</td>' if i == numeric else f"<td>{_e(c)}</td>"
            for i, c in enumerate(row)
        )
        body.append(f"<tr>{cells}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _findings(title: str, css: str, findings: Sequence[FindingLike]) -> str:
    out = f'<h2 class="{css}">{_e(title)} ({len(findings)})</h2>'
    if not findings:
        return out + "<p>None.</p>"
    return out + _table(["code", "znode", "what"], [[f.code, f.path, f.message] for f in findings])


def _summary(summary: Mapping[str, JsonValue]) -> str:
    if not summary:
        return ""
    rows = "".join(
        f"<tr><th>{_e(k)}</th>"
        + (f'<td class="num">{_e(v)}</td>' if isinstance(v, int | float) and not
           isinstance(v, bool) else f"<td>{_e(format_value(v))}</td>")
        + "</tr>"
        for k, v in summary.items()
    )
    return f"<h2>Summary</h2><table><tbody>{rows}</tbody></table>"


def _parity(parity: ParityReport, policy: RedactionPolicy, max_rows: int) -> str:
    verdict = (
        '<p class="ok">Parity: the voters\' log matches ZooKeeper.</p>'
        if parity.parity
        else f'<p class="bad">Parity: {len(parity.differences)} difference(s).</p>'
    )
    out = "<h2>Parity</h2>" + verdict
    out += _table(["kind", "entities checked"],
                  [[k, str(v)] for k, v in parity.checked.items()], numeric=1)
    if parity.differences:
        rows = []
        for d in parity.differences[:max_rows]:
            shown = d.to_json(policy)
            rows.append([d.kind, d.key, d.field, format_value(shown["zookeeper"]),
                         format_value(shown["quorum"])])
        out += "<h2>Differences</h2>" + _table(["kind", "key", "field", "zookeeper", "quorum"],
                                               rows)
        hidden = len(parity.differences) - max_rows
        if hidden > 0:
            out += f"<p>… and {hidden} more (see the JSON report).</p>"
    for title, entries in ((CHANGED_TITLE, parity.changed_by_kafka),
                           (NOT_CHECKED_TITLE, parity.not_checked)):
        if entries:
            rows = [[d.kind, d.key, d.field, format_value(d.to_json(policy)["zookeeper"]),
                     format_value(d.to_json(policy)["quorum"]), d.reason]
                    for d in entries[:max_rows]]
            out += f"<h2>{_e(title)}</h2>" + _table(
                ["kind", "key", "field", "zookeeper", "quorum", "why"], rows)
    return out


def _window(window: WindowParts, *, width: int = 720, height: int = 28) -> str:
    """The window's parts as one stacked horizontal bar (inline SVG), then a table.

    The bar is scaled to the sum of the measured parts; every segment carries a `<title>`
    (its name and milliseconds) and the table lists unmeasured parts with their reason.
    """
    stacked = window.stacked()
    whole = sum(p.ms for p, _ in stacked if p.ms is not None)
    out = ["<h2>Controller-unavailability window, stacked</h2>"]
    if whole > 0:
        rects = []
        for p, start in stacked:
            assert p.ms is not None
            x = start / whole * width
            w = max(p.ms / whole * width, 0.5)
            colour = _PART_COLOURS.get(p.name, "#999")
            rects.append(
                f'<rect class="part" data-part="{_e(p.name)}" x="{x:.2f}" y="0" '
                f'width="{w:.2f}" height="{height}" fill="{colour}">'
                f"<title>{_e(p.name)}: {p.ms:.1f} ms</title></rect>")
            # a split part: its sub-parts drawn over it in alternating shades, each titled
            for i, (sub, at) in enumerate(p.stacked()):
                assert sub.ms is not None
                sx = (start + at) / whole * width
                sw = max(sub.ms / whole * width, 0.5)
                rects.append(
                    f'<rect class="sub" data-part="{_e(p.name)}.{_e(sub.name)}" '
                    f'x="{sx:.2f}" y="{height // 4}" width="{sw:.2f}" height="{height // 2}" '
                    f'fill="{_SUB_SHADES[i % len(_SUB_SHADES)]}"><title>{_e(p.name)}: '
                    f"{_e(sub.name)}: {sub.ms:.1f} ms</title></rect>")
        out.append(f'<svg class="window" role="img" width="{width}" height="{height + 16}" '
                   f'viewBox="0 0 {width} {height + 16}" xmlns="http://www.w3.org/2000/svg">'
                   f"<title>window parts: {whole:.1f} ms measured</title>{''.join(rects)}"
                   f'<text x="0" y="{height + 12}">0 ms</text><text x="{width}" '
                   f'y="{height + 12}" text-anchor="end">{whole:.1f} ms</text></svg>')
    else:
        out.append("<p>No part of the window could be measured.</p>")
    starts = {p.name: start for p, start in stacked}
    rows = []
    for p in window.parts:
        swatch = (f'<span style="color:{_PART_COLOURS.get(p.name, "#999")}">&#9632;</span>'
                  if p.ms is not None else "")
        if p.ms is None:
            cells = [swatch, _e(p.name), '<span class="na">n/a</span>', "", _e(p.source),
                     f'<span class="na">{_e(p.reason or "")}</span>']
        else:
            cells = [swatch, _e(p.name), f"{p.ms:.1f}", f"{starts[p.name]:.1f}", _e(p.source),
                     _e(p.what)]
        rows.append("<tr>" + "".join(
            f'<td class="num">{c}</td>' if i in (2, 3) else f"<td>{c}</td>"
            for i, c in enumerate(cells)) + "</tr>")
        sub_rows = []
        if p.parts_reason is not None:
            sub_rows.append(["", "&nbsp;&nbsp;split", '<span class="na">n/a</span>', "", "",
                             f'<span class="na">{_e(p.parts_reason)}</span>'])
        for i, (sub, at) in enumerate(p.stacked()):
            assert sub.ms is not None
            sub_rows.append([
                f'<span style="color:{_SUB_SHADES[i % len(_SUB_SHADES)]}">&#9632;</span>',
                f"&nbsp;&nbsp;{_e(sub.name)}", f"{sub.ms:.1f}",
                "" if p.name not in starts else f"{starts[p.name] + at:.1f}",
                _e(sub.source), _e(sub.what)])
        for cells in sub_rows:
            rows.append('<tr class="sub">' + "".join(
                f'<td class="num">{c}</td>' if i in (2, 3) else f"<td>{c}</td>"
                for i, c in enumerate(cells)) + "</tr>")
    head = "".join(f"<th>{_e(h)}</th>" for h in
                   ("", "part", "ms", "starts at (ms)", "source", "what / why not"))
    out.append(f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>")
    return "".join(out)


def render_html(
    report: Report,
    *,
    policy: RedactionPolicy = RedactionPolicy.STRICT,
    max_rows: int = 5000,
) -> str:
    """The whole page: summary, blockers, warnings, record counts and the diff tables.

    Args:
        report: the report data.
        policy: how secret-derived values are shown (strict: `<redacted>`).
        max_rows: cap on difference rows in the page.

    Returns:
        A complete HTML5 document with inline CSS and no external references.
    """
    parts = _page_start(report.title)
    if report.blockers:
        parts.append(f'<p class="bad">{len(report.blockers)} blocker(s): the migration would '
                     "not start.</p>")
    else:
        parts.append('<p class="ok">No blockers.</p>')
    parts.append(_summary(report.summary))
    parts.append(_findings("Blockers", "bad", report.blockers))
    parts.append(_findings("Warnings", "warn", report.warnings))
    if report.records:
        parts.append("<h2>Records</h2>")
        parts.append(_table(["record type", "count"],
                            [[k, str(v)] for k, v in sorted(report.records.items())], numeric=1))
    if report.window is not None:
        parts.append(_window(report.window))
    for title, text in report.texts:
        parts.append(f"<h2>{_e(title)}</h2><pre>{_e(text)}</pre>")
    if report.parity is not None:
        parts.append(_parity(report.parity, policy, max_rows))
    parts.append("</body></html>\n")
    return "\n".join(p for p in parts if p)


def render_fleet_html(
    *,
    title: str,
    engine: str,
    rows: Sequence[Mapping[str, JsonValue]],
    by_status: Mapping[str, Sequence[str]],
    blockers_by_kind: Mapping[str, Sequence[str]],
) -> str:
    """The fleet's page (`plan --fleet --html`): readiness counts, one row a cluster (status,
    the path its line plans, sizes, expected records, its blockers or its error), and the
    blocker kinds across the fleet with the clusters each hits.

    Args:
        title: page title.
        engine: what ran the job (e.g. "spark local[8]").
        rows: `plan --fleet --json`'s cluster objects (plan's document plus `name`, `status`,
            `error`, `path`).
        by_status: status -> clusters, in the order the statuses are shown.
        blockers_by_kind: blocker code (or `error:<kind>`) -> clusters it hits.

    Returns:
        A complete HTML5 document with inline CSS and no external references.
    """
    css = {"ready": "ok", "warnings": "warn", "blocked": "bad", "unreachable": "bad"}
    parts = [
        *_page_start(title),
        f"<p>{len(rows)} cluster(s), planned on {_e(engine)}.</p>",
        "<h2>Readiness</h2>",
        "<table><thead><tr><th>status</th><th>clusters</th><th>which</th></tr></thead><tbody>",
    ]
    for status, names in by_status.items():
        parts.append(f'<tr><td class="{css.get(status, "")}">{_e(status)}</td>'
                     f'<td class="num">{len(names)}</td><td>{_e(", ".join(names))}</td></tr>')
    parts.append("</tbody></table>")
    parts.append("<h2>Clusters</h2>")
    table = []
    for row in rows:
        path = row.get("path")
        path_text = ""
        if isinstance(path, Mapping):
            path_text = (f"{'offline' if path.get('offline') else 'online'} to Kafka "
                         f"{path.get('target_kafka')}, metadata.version "
                         f"{path.get('metadata_version')}")
        records = row.get("records")
        total = sum(v for v in records.values() if isinstance(v, int)) \
            if isinstance(records, Mapping) else 0
        error = row.get("error")
        blockers = row.get("blockers")
        what = (f"{error.get('kind')} (exit {error.get('exit_code')}): {error.get('message')}"
                if isinstance(error, Mapping)
                else ", ".join(sorted({str(b.get("code")) for b in blockers
                                       if isinstance(b, Mapping)}))
                if isinstance(blockers, list) else "")
        warnings = row.get("warnings")
        sizes = [row.get("brokers"), row.get("topics"), row.get("partitions")]
        table.append(
            f'<tr><td>{_e(row.get("name"))}</td>'
            f'<td class="{css.get(str(row.get("status")), "")}">{_e(row.get("status"))}</td>'
            f"<td>{_e(path_text)}</td>"
            + "".join(f'<td class="num">{_e("" if v is None else v)}</td>' for v in sizes)
            + f'<td class="num">{_e(total if error is None else "")}</td>'
            f'<td class="num">{_e(len(warnings) if isinstance(warnings, list) else "")}</td>'
            f"<td>{_e(what)}</td></tr>")
    heads = ["cluster", "status", "path planned", "brokers", "topics", "partitions",
             "records expected", "warnings", "blockers / error"]
    parts.append("<table><thead><tr>" + "".join(f"<th>{_e(h)}</th>" for h in heads)
                 + "</tr></thead><tbody>" + "".join(table) + "</tbody></table>")
    parts.append(f'<h2 class="bad">Blockers by kind ({len(blockers_by_kind)})</h2>')
    if blockers_by_kind:
        parts.append(_table(["kind", "clusters", "which"],
                            [[k, str(len(v)), ", ".join(v)] for k, v in blockers_by_kind.items()],
                            numeric=1))
    else:
        parts.append("<p>None.</p>")
    parts.append("</body></html>\n")
    return "\n".join(parts)


def write_report_file(path: str | os.PathLike[str], text: str) -> None:
    """Write `text` (UTF-8) to `path` with mode 0600, atomically (`writers.atomic_write`).

    The file is created 0600 (never chmod'ed afterwards); on any error the temporary file is
    removed and `path` is left as it was.

    Raises:
        OSError: the directory is missing or not writable.
    """
    atomic_write(path, text.encode("utf-8"))
