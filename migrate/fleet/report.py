"""`plan --fleet`'s report: the terminal table, the `--json` document, the HTML page, the exit code.

Exit code: 3 when any cluster is unreachable (3 wins), else 1 when any is blocked (a blocker, or
a cluster whose znodes `plan` would refuse as malformed), else 0 (ready or warnings only).
"""

from __future__ import annotations

from migrate.cli.exit_codes import EXIT_FINDINGS, EXIT_OK, EXIT_UNREACHABLE
from migrate.fleet.job import FleetResult

__all__ = ["engine_text", "fleet_exit_code", "fleet_html", "fleet_json", "print_fleet"]

_STYLE = {"ready": "green", "warnings": "yellow", "blocked": "red", "unreachable": "red"}


def fleet_exit_code(result: FleetResult) -> int:
    """3 if any cluster is unreachable, else 1 if any is blocked, else 0."""
    if result.by_status.get("unreachable"):
        return EXIT_UNREACHABLE
    if result.by_status.get("blocked"):
        return EXIT_FINDINGS
    return EXIT_OK


def engine_text(result: FleetResult) -> str:
    """What ran the job, for people: `spark local[8]` or `in-process`."""
    master = result.engine.get("master")
    return result.engine["name"] + (f" {master}" if master else "")


def fleet_json(result: FleetResult) -> dict[str, object]:
    """The `--json` document: one object a cluster (`plan --json`'s plus `name`, `status`,
    `error`, `path`, `engine` and the task's measurements) and the fleet's aggregates."""
    return {
        "engine": result.engine,
        "counts": {s: len(v) for s, v in result.by_status.items()},
        "blockers_by_kind": result.blockers_by_kind,
        "clusters": result.rows,
        "seconds": round(result.seconds, 3),
        "driver_peak_rss_bytes": result.driver_peak_rss_bytes,
    }


def fleet_html(result: FleetResult) -> str:
    """The self-contained page (`verify.render_fleet_html`)."""
    from verify import render_fleet_html

    return render_fleet_html(title="zk2kraft plan --fleet", engine=engine_text(result),
                             rows=result.rows,  # type: ignore[arg-type]
                             by_status=result.by_status,
                             blockers_by_kind=result.blockers_by_kind)


def print_fleet(result: FleetResult, *, to_stderr: bool) -> None:
    """The readiness table, one row a cluster, then the blocker kinds across the fleet."""
    from rich.table import Table
    from rich.text import Text

    from verify import plan_console

    console = plan_console(stderr=to_stderr)
    table = Table(title=Text(f"zk2kraft plan --fleet ({len(result.rows)} clusters, "
                             f"{engine_text(result)})"), title_justify="left")
    for head in ("cluster", "status", "brokers", "topics", "partitions", "records",
                 "blockers / error"):
        table.add_column(head, justify="right" if head in ("brokers", "topics", "partitions",
                                                           "records") else "left",
                         overflow="fold")
    for row in result.rows:
        error = row["error"]
        blockers = row["blockers"]
        records = row["records"]
        assert isinstance(blockers, list) and isinstance(records, dict)
        what = (f"{error['kind']}: {error['message']}" if isinstance(error, dict)
                else ", ".join(sorted({str(b["code"]) for b in blockers})))
        status = str(row["status"])
        table.add_row(Text(str(row["name"])), Text(status, style=_STYLE[status]),
                      *(Text("" if row[k] is None else str(row[k]))
                        for k in ("brokers", "topics", "partitions")),
                      Text("" if error else str(sum(records.values()))), Text(what))
    console.print(table)
    counts = ", ".join(f"{len(v)} {s}" for s, v in result.by_status.items())
    console.print(Text(f"readiness: {counts}"))
    if result.blockers_by_kind:
        kinds = Table(title=Text("blockers by kind", style="red"), title_justify="left")
        kinds.add_column("kind", style="red", no_wrap=True)
        kinds.add_column("clusters", justify="right")
        kinds.add_column("which", overflow="fold")
        for kind, names in result.blockers_by_kind.items():
            kinds.add_row(Text(kind), Text(str(len(names))), Text(", ".join(names)))
        console.print(kinds)
