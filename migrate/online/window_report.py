"""`window_ms.parts` for `migrate --cutover now|manual`, and the `--html` page that draws them.

The run (`migrate.online.run`) stamps the window's boundaries on its monotonic clock; this module
adds Kafka's side from `--controller-log FILE` (the new leader's server log, repeatable when it
is not known in advance which controller will lead): it follows the files until the migration
driver logs DUAL_WRITE after the fence, or until `--handoff-timeout` passed, then stacks the
parts with `verify.window_parts`. Log files are read incrementally, from where the last read
stopped, so a large server log is read once.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from migrate.errors import BadFlagError
from migrate.online.outcome import OnlineOutcome
from migrate.preflight.findings import Finding
from verify import (
    DriverEvent,
    KafkaHandoff,
    RaftEvent,
    Report,
    WindowParts,
    election_split,
    kafka_handoff,
    parse_driver_lines,
    parse_raft_lines,
    render_html,
    window_parts,
)

__all__ = ["check_controller_logs", "follow_controller_logs", "online_html", "parts_for"]


def check_controller_logs(paths: Sequence[str] | None) -> list[Path]:
    """`--controller-log FILE` (repeatable): may not exist yet (a controller started by
    `--on-cutover` creates it), but must not be a directory.

    Raises:
        BadFlagError: a path is a directory (exit 2, naming it).
    """
    out = []
    for raw in paths or ():
        path = Path(raw).expanduser()
        if path.is_dir():
            raise BadFlagError(f"--controller-log {raw}: is a directory; give the controller's "
                               "server log file (log4j's server.log)")
        out.append(path)
    return out


@dataclass
class _Followed:
    path: Path
    offset: int = 0
    pending: str = ""
    events: list[DriverEvent] = field(default_factory=list)
    raft: list[RaftEvent] = field(default_factory=list)
    error: str | None = None

    def read(self) -> None:
        try:
            with self.path.open("rb") as f:
                f.seek(self.offset)
                chunk = f.read()
        except FileNotFoundError:
            self.error = "not found"
            return
        except OSError as exc:
            self.error = f"cannot be read ({exc.strerror or exc})"
            return
        self.error = None
        self.offset += len(chunk)
        text = self.pending + chunk.decode("utf-8", errors="replace")
        lines = text.split("\n")
        self.pending = lines.pop()  # a line still being written waits for its newline
        self.events.extend(parse_driver_lines(lines))
        self.raft.extend(parse_raft_lines(lines))


def follow_controller_logs(
    paths: Sequence[Path], *, fence_wall_s: float, timeout_s: float,
    clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep,
    raft: list[RaftEvent] | None = None,
) -> tuple[KafkaHandoff | None, str | None]:
    """Read the logs until one shows this cutover's DUAL_WRITE, or `timeout_s` passed.

    Args:
        raft: when given, receives every file's Raft state changes (`parse_raft_lines`), for
            the election's split.

    Returns:
        The most advanced takeover found (None if no file showed any) and, when it is not
        complete, the reason in words naming the files.
    """
    followed = [_Followed(p) for p in paths]
    try:
        return _follow(followed, paths, fence_wall_s=fence_wall_s, timeout_s=timeout_s,
                       clock=clock, sleep=sleep)
    finally:
        if raft is not None:
            for f in followed:
                raft.extend(f.raft)


def _follow(
    followed: list[_Followed], paths: Sequence[Path], *, fence_wall_s: float, timeout_s: float,
    clock: Callable[[], float], sleep: Callable[[float], None],
) -> tuple[KafkaHandoff | None, str | None]:
    deadline = clock() + timeout_s
    best: KafkaHandoff | None = None
    while True:
        for f in followed:
            f.read()
        found = [kafka_handoff(f.events, not_before_s=fence_wall_s) for f in followed]
        best = max(found, key=_progress, default=None)
        if (best is not None and best.complete) or clock() >= deadline:
            break
        sleep(0.2)
    names = ", ".join(str(p) for p in paths)
    errors = [f"{f.path}: {f.error}" for f in followed if f.error]
    if best is not None and _progress(best) == 0:
        best = None
    if best is None:
        return None, "; ".join(errors) if errors else (
            f"{names}: no migration-driver line after the fence")
    if best.complete:
        return best, None
    return best, f"{names}: DUAL_WRITE not logged within --handoff-timeout"


def _progress(h: KafkaHandoff) -> int:
    return sum(v is not None for v in (h.claimed_s, h.sync_s, h.broker_comm_s, h.dual_write_s))


def parts_for(outcome: OnlineOutcome, *, standin: bool, logs: Sequence[Path],
              timeout_s: float) -> WindowParts:
    """The stacked parts of this run's window (`window_ms.parts`).

    Args:
        outcome: the finished run (its stamps and the fence's wall-clock time).
        standin: the stand-in transport was used.
        logs: `--controller-log` files (none: Kafka's parts are null, saying why).
        timeout_s: how long to wait for DUAL_WRITE in the logs after the claim (t2); without a
            claim the logs are read once.
    """
    handoff = reason = None
    raft: list[RaftEvent] | None = None
    if logs and outcome.fence_wall_s is not None:
        wait = timeout_s if "claimed" in outcome.stamps else 0.0
        raft = []
        handoff, reason = follow_controller_logs(logs, fence_wall_s=outcome.fence_wall_s,
                                                 timeout_s=wait, raft=raft)
    elif logs:
        reason = "the fence happened in an earlier run (resumed): its log lines are not known"
    missing = {}
    if not standin and "handoff" in outcome.stamps and outcome.on_cutover_exit is None:
        missing["kafka_claim"] = ("no --on-cutover: the controllers were started by hand, and "
                                  "zk2kraft did not wait for their claim")
    split = election_split(outcome.stamps, outcome.handover, raft,
                           not_before_s=outcome.fence_wall_s,
                           log_reason=reason) if standin else None
    return window_parts(outcome.stamps, standin=standin, handoff=handoff, log_reason=reason,
                        missing=missing, split=split)


def online_html(outcome: OnlineOutcome, parts: WindowParts | None, *, source: str) -> str:
    """The `--html` page of an online run: the summary, the findings and the stacked window."""
    doc = outcome.to_json()
    window = doc["window_ms"]
    assert isinstance(window, dict)
    summary: dict[str, int | float | str | None] = {
        "zookeeper": source,
        "status": str(doc["status"]),
        "cutover": outcome.cutover,
        "transport": str(outcome.transport.get("kind")),
        "window tool (t1-t0) ms": window.get("tool"),
        "window total (t2-t0) ms": window.get("total"),
    }
    if "observed" in window:
        summary["window observed by clients ms"] = window.get("observed")
    summary.update({"final delta records": outcome.delta_records,
                    "mirrored records": outcome.mirrored_records,
                    "pre-copy records": outcome.precopy_records,
                    "last offset": outcome.last_offset})
    if outcome.error is not None:
        summary["error (exit code {})".format(outcome.error["exit_code"])] = str(
            outcome.error["message"])
    s = outcome.summary
    # what Kafka did not confirm after the cutover (exit 4) shows with the findings
    problems = tuple(Finding(p["code"], p["message"], "") for p in outcome.problems)
    report = Report(
        title="zk2kraft migrate (online)",
        summary=summary,
        blockers=s.report.blockers if s is not None else (),
        warnings=(*problems, *(s.report.warnings if s is not None else ())),
        records=dict(s.records) if s is not None else {},
        window=parts,
    )
    return render_html(report)
