"""The online migration (`migrate --cutover now|manual`): the run and what sits beside it.

- `run`: the run itself, phase by phase (pre-copy, mirror, cutover, handoff);
- `phases`: the run's phases (`Phase`, the table of legal transitions) and one module each;
- `options`: what a run is given; `outcome`: what it reports;
- `journal`: where a crashed run stopped (its phase), so a re-run resumes there;
- `transport`, `takeover`: what differs when the quorum is the stand-in;
- `mirror_delta`: how the mirror frames its deltas;
- `canary` (its figures in `canary_tally`), `cutover_check`, `window_report`: what clients and
  Kafka saw of the cutover;
- `operator_sequence`, `runbook`: the operator's steps, printed by `plan` and in docs/runbooks/.

The CLI imports from here.
"""

from migrate.online.broker_gate import brokers_line
from migrate.online.canary import (
    CANARY_TOPIC,
    Canary,
    check_bootstrap_servers,
    finish_canary,
    start_canary,
    window_figures,
)
from migrate.online.cutover_check import brokers_serving, cutover_problems
from migrate.online.journal import Journal, check_journal_dir, default_journal_dir
from migrate.online.options import OnlineOptions, check_cutover_version
from migrate.online.outcome import CutoverRequest, OnlineOutcome, StatusSink
from migrate.online.phases import Phase
from migrate.online.run import run_online
from migrate.online.window_report import check_controller_logs, online_html, parts_for

__all__ = [
    "CANARY_TOPIC",
    "Canary",
    "CutoverRequest",
    "Journal",
    "OnlineOptions",
    "OnlineOutcome",
    "Phase",
    "StatusSink",
    "brokers_line",
    "brokers_serving",
    "check_bootstrap_servers",
    "check_controller_logs",
    "check_cutover_version",
    "check_journal_dir",
    "cutover_problems",
    "default_journal_dir",
    "finish_canary",
    "online_html",
    "parts_for",
    "run_online",
    "start_canary",
    "window_figures",
]
