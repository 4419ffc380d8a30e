"""The go/no-go judgement every migration makes before it writes anything: the pre-flight's and
the translator's findings, with the blockers the operator overrode by their own flag moved to
the warnings (`judge`); the flags given (`overrides_given`); and the error a refused run exits
with (`blockers_message`). The bulk copy (`migrate.bulk.run`) and the online pre-copy
(`migrate.online.phases.context.judge_tree`) judge through this one module."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from migrate.preflight.checks import PlanSummary, summarize
from migrate.preflight.findings import Finding
from migrate.translate.translation import TranslationResult
from zkreader import ClusterSnapshot

__all__ = ["OVERRIDES", "blockers_message", "judge", "overrides_given"]

# Blocker code -> the flag that overrides it (the blocker's own override, nothing broader).
OVERRIDES: dict[str, str] = {"LOG_DIR_EVENT_PENDING": "allow_pending_log_dir_events"}


_LISTED_BLOCKERS = 20  # in the error message; the --json document and the table hold them all


def overrides_given(flags: object) -> frozenset[str]:
    """The override flags (`OVERRIDES`' attribute names) set on the parsed `flags`."""
    return frozenset(f for f in OVERRIDES.values() if getattr(flags, f, False))


def _blocking(summary: PlanSummary, overrides: frozenset[str]) -> PlanSummary:
    """Move blockers whose own override flag was given into the warnings, saying so."""
    kept: list[Finding] = []
    moved: list[Finding] = []
    for f in summary.report.blockers:
        flag = OVERRIDES.get(f.code)
        if flag is not None and flag in overrides:
            option = "--" + flag.replace("_", "-")
            moved.append(Finding(f.code, f"{f.message} (overridden by {option})", f.path))
        else:
            kept.append(f)
    if not moved:
        return summary
    report = type(summary.report)(tuple(kept), summary.report.warnings + tuple(moved))
    return PlanSummary(report, summary.records, summary.brokers, summary.topics,
                       summary.partitions, summary.source)


def judge(snapshot: ClusterSnapshot, rest: TranslationResult, counts: Mapping[str, int], *,
          voter_ids: Sequence[int], overrides: frozenset[str], offline: bool = False
          ) -> PlanSummary:
    """The plan summary: pre-flight + the translator's findings, overrides applied.

    `rest` is `translate_rest`'s result (it carries every translator finding) and `counts` the
    whole log's (`rest_counts` before encoding): judging never needs the topic table translated.
    The bulk copy and the online pre-copy judge through this one function.
    """
    return _blocking(
        summarize(
            snapshot,
            records=counts,
            extra_blockers=rest.blockers,
            extra_warnings=rest.warnings,
            voter_ids=voter_ids,
            offline=offline,
        ),
        overrides,
    )


def blockers_message(blockers: Sequence[Finding]) -> str:
    """The error `migrate` exits 1 with: how many blockers, the first few, nothing written."""
    lines = [f"  {f.code} {f.path}: {f.message}" for f in blockers[:_LISTED_BLOCKERS]]
    if len(blockers) > _LISTED_BLOCKERS:
        lines.append(f"  ... and {len(blockers) - _LISTED_BLOCKERS} more (all in `plan --json`)")
    return f"{len(blockers)} pre-flight blocker(s); nothing was written:\n" + "\n".join(lines)
