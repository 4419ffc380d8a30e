"""`zk2kraft migrate --cutover now|manual`: flags, the live status, the manual trigger, the report.

The run itself is `migrate.online.run.run_online`; this module only turns flags into options,
renders what the run reports (a rich live line on a terminal, plain lines otherwise, every
message on stderr when `--json -` owns stdout), arms the manual trigger (Enter on a terminal or
SIGUSR1) and writes the `--json` document (0600).
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import math
import signal
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.live import Live

from migrate._private_file import (
    check_output_paths,
    voter_dirs,
    write_json_report,
    write_report,
)
from migrate.bulk.voters import VoterTarget, check_voters
from migrate.cli.signal_inbox import run_unhandled, signal_inbox
from migrate.errors import BadFlagError, BlockersFoundError, CanaryError, CutoverUnconfirmedError
from migrate.flags.client_config import librdkafka_config, read_properties
from migrate.flags.standin import StandInSpec
from migrate.flags.zookeeper import connect_options
from migrate.judge import blockers_message, overrides_given
from migrate.online import (
    CANARY_TOPIC,
    Canary,
    CutoverRequest,
    Journal,
    OnlineOptions,
    OnlineOutcome,
    Phase,
    StatusSink,
    brokers_line,
    brokers_serving,
    check_bootstrap_servers,
    check_controller_logs,
    check_cutover_version,
    check_journal_dir,
    cutover_problems,
    default_journal_dir,
    finish_canary,
    online_html,
    parts_for,
    run_online,
    start_canary,
    window_figures,
)

__all__ = ["online_options", "run"]

_BROKER_WAIT_DEFAULT_S = 60.0  # --broker-wait's default (migrate.cli.migrate's help says it)
_HANDOFF_TIMEOUT_DEFAULT_S = 120.0  # --handoff-timeout's default (its help says it)


def online_options(args: argparse.Namespace, standin: StandInSpec | None) -> OnlineOptions:
    """Check the online flags before anything connects.

    Args:
        args: the parsed flags.
        standin: `check_standin_flags`' result (the command checked it before dispatching).

    Raises:
        BadFlagError: a wrong flag, or a metadata.version below 3.6-IV1 (exit 2, says why).
        VoterUnavailableError: a voter directory cannot be created or written (exit 3).
    """
    check_cutover_version(args.metadata_version)
    html = getattr(args, "html", None)
    check_controller_logs(getattr(args, "controller_logs", None))
    if standin is not None:
        targets = [VoterTarget(standin.node_id, standin.log_dir)]
    elif not args.voters:
        raise BadFlagError("--cutover now|manual needs the voters: --voter ID=DIR for each "
                           "controller log dir on this host, or --standin ID@HOST:PORT=DIR "
                           "with --controller/--quorum-voters to lead running controllers")
    else:
        targets = check_voters(args.voters)
    journal = Path(args.journal).expanduser().resolve() if args.journal else \
        default_journal_dir(targets[0].path)
    if any(journal == t.path or journal.is_relative_to(t.path) for t in targets):
        raise BadFlagError(f"--journal {args.journal}: must not be inside a voter directory")
    journal_flag = "--journal" if args.journal else "--journal (default)"
    check_output_paths([("--json", args.json), ("--html", html)],
                       [*voter_dirs(targets), (f"{journal_flag} {journal}", journal)])
    check_journal_dir(journal, journal_flag)
    handoff_timeout = (_HANDOFF_TIMEOUT_DEFAULT_S if args.handoff_timeout is None
                       else args.handoff_timeout)
    if not math.isfinite(handoff_timeout) or handoff_timeout <= 0:
        raise BadFlagError(f"--handoff-timeout: must be > 0 seconds, a finite number (got "
                           f"{handoff_timeout})")
    if args.broker_wait is not None and standin is None:
        raise BadFlagError("--broker-wait: only with --standin (it waits for brokers to "
                           "register with the stand-in; with --voter no broker registers "
                           "until the KRaft controllers start)")
    fence_without_brokers = bool(getattr(args, "fence_without_brokers", False))
    if fence_without_brokers and standin is None:
        raise BadFlagError("--fence-without-brokers: only with --standin (brokers register "
                           "with the stand-in; with --voter none does before the cutover)")
    broker_wait = _BROKER_WAIT_DEFAULT_S if args.broker_wait is None else args.broker_wait
    if not math.isfinite(broker_wait) or broker_wait < 0:
        raise BadFlagError(f"--broker-wait: must be >= 0 seconds, a finite number (got "
                           f"{broker_wait})")
    check_bootstrap_servers(args.bootstrap_server)
    max_window = getattr(args, "max_window", None)
    if max_window is not None and (not math.isfinite(max_window) or max_window <= 0
                                   or args.bootstrap_server is None):
        raise BadFlagError(f"--max-window: must be > 0 seconds, a finite number (got "
                           f"{max_window}), and needs --bootstrap-server (the canary "
                           "measures the window the bound is about)")
    return OnlineOptions(
        connect=connect_options(args),
        voters=tuple(targets),
        metadata_version=args.metadata_version,
        cutover=args.cutover,
        journal_dir=journal,
        password_encoder_secret=args.password_encoder_secret,
        on_cutover=args.on_cutover,
        overrides=overrides_given(args),
        handoff_timeout_s=handoff_timeout,
        broker_wait_s=broker_wait,
        fence_without_brokers=fence_without_brokers,
        standin=standin,
    )


class _ConsoleSink(StatusSink):
    """Messages as lines; mirror figures as one live line (terminal) or a line every 5 s."""

    def __init__(self, console: Console, *, quiet: bool) -> None:
        self.console = console
        self.quiet = quiet
        self.live: Live | None = None
        self._last_line = 0.0

    def say(self, line: str) -> None:
        super().say(line)
        if not self.quiet:
            self.console.print(line, markup=False, highlight=False)

    def mirror(self, figures: dict[str, Any]) -> None:
        if self.quiet:
            return
        voters = " ".join(f"{v['node_id']}:{v['state']}" for v in figures["voters"])
        text = (f"mirror: {figures['records_mirrored']} records mirrored, "
                f"{figures['changes_per_s']:.0f} changes/s, lag {figures['lag_s'] * 1000:.0f} ms, "
                f"last offset {figures['last_offset']}, voters {voters}, "
                f"ZooKeeper {figures['zookeeper']}")
        if figures.get("brokers") is not None:
            text += f", brokers {brokers_line(figures['brokers'])}"
        if self.console.is_terminal:
            if self.live is None:
                self.live = Live(text, console=self.console, refresh_per_second=4,
                                 transient=False)
                self.live.start()
            self.live.update(text)
        elif time.monotonic() - self._last_line >= 5.0:
            self._last_line = time.monotonic()
            self.console.print(text, markup=False, highlight=False)

    def mirror_ended(self) -> None:
        # the last figures stay on screen as a plain line; the cutover's messages follow it
        self.close()

    def close(self) -> None:
        if self.live is not None:
            self.live.stop()
            self.live = None


def _arm_trigger(mode: str) -> CutoverRequest:
    """`manual`: Enter on a terminal, or SIGUSR1, sets the event."""
    trigger = CutoverRequest()
    if mode != "manual":
        return trigger
    signal.signal(signal.SIGUSR1, lambda *_: trigger.set())
    if sys.stdin is not None and sys.stdin.isatty():
        def wait_enter() -> None:
            # every Enter asks again: a refused cutover (a broker not serving,
            # migrate.online.broker_gate) clears the event, and the operator may ask again
            while sys.stdin.readline():
                trigger.set()

        threading.Thread(target=wait_enter, name="zk2kraft-enter", daemon=True).start()
    return trigger


@contextlib.contextmanager
def _signals_polled(trigger: CutoverRequest, mode: str) -> Iterator[None]:
    """While the run lasts, each turn of the mirror also reads the signals the kernel delivered
    (`migrate.cli.signal_inbox`): SIGUSR1 asks for the cutover (`manual`), SIGTERM and SIGINT
    run their handler if Python has not. Main thread only (a test may call `run` from another:
    then the Python handlers alone, as before)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    with signal_inbox() as inbox:
        def take() -> None:
            delivered = inbox.take()
            if signal.SIGUSR1 in delivered and mode == "manual":
                trigger.set()
            run_unhandled(delivered)

        trigger.poll = take
        try:
            yield
        finally:
            trigger.poll = None


def run(args: argparse.Namespace, standin: StandInSpec | None) -> int:
    """Run the online migration; 0 when the cutover completed (or had already) and Kafka
    confirms it, 1 on blockers, 4 when Kafka does not confirm it (`migrate.online.cutover_check`).
    Every way out writes the `--json`/`--html` report asked for (`status` says which)."""
    options = online_options(args, standin)
    max_window = getattr(args, "max_window", None)
    to_stdout = args.json == "-" or getattr(args, "html", None) == "-"
    console = Console(stderr=to_stdout or not sys.stdout.isatty(), highlight=False)
    sink = _ConsoleSink(console, quiet=args.quiet)
    trigger = _arm_trigger(options.cutover)
    canary, ask_config = _canary_for(args, options, sink)
    try:
        with _signals_polled(trigger, options.cutover):
            outcome = run_online(options, sink=sink, trigger=trigger)
    except BaseException as exc:
        if canary is not None:
            canary.stop(None, drain_timeout_s=0)
        _write_failed_report(args, options, exc)
        raise
    finally:
        sink.close()
    extra: dict[str, Any] = {}
    if canary is not None:
        report = finish_canary(canary, outcome.fence_at, options.handoff_timeout_s, sink.say)
        outcome.canary = window_figures(report)
        extra["canary"] = report.to_json()
    parts = None
    if not outcome.refused and not outcome.already_done:
        logs = check_controller_logs(getattr(args, "controller_logs", None))
        if logs and "claimed" in outcome.stamps:
            sink.say(f"reading {', '.join(map(str, logs))} for Kafka's takeover (up to "
                     f"{options.handoff_timeout_s:g}s for DUAL_WRITE)")
        parts = parts_for(outcome, standin=standin is not None, logs=logs,
                          timeout_s=options.handoff_timeout_s)
        outcome.parts = parts.to_json()
        if canary is None and ask_config is None:
            sink.say("no --bootstrap-server: zk2kraft cannot ask the brokers whether they serve "
                     "after the handoff; check them yourself")
        else:
            sink.say("asking the brokers whether they serve after the handoff")
        config = ask_config if canary is None else canary.config
        problems = cutover_problems(
            outcome, broker_wait_s=options.broker_wait_s,
            handoff_timeout_s=options.handoff_timeout_s, canary=extra.get("canary"),
            max_window_s=max_window, bootstrap=args.bootstrap_server,
            ask_brokers=None if config is None else (
                lambda ids: brokers_serving(config, ids, CANARY_TOPIC,
                                            min(options.handoff_timeout_s, 60.0))))
        if problems:
            outcome.problems = [p.to_json() for p in problems]
        if not outcome.refused:
            _remember_verdict(options, outcome.problems)
    elif outcome.already_done:
        _repeat_verdict(options, outcome, sink)
    doc = {**outcome.to_json(), **extra}
    write_json_report(args.json, doc)
    if getattr(args, "html", None) is not None:
        write_report("--html", args.html,
                     online_html(outcome, parts, source=args.zookeeper).encode("utf-8"))
    if not args.quiet:
        _print(console, outcome, source=args.zookeeper)
        if parts is not None:
            from verify import render_window_parts

            render_window_parts(console, parts)
    if outcome.refused:
        assert outcome.summary is not None
        raise BlockersFoundError(blockers_message(outcome.summary.report.blockers))
    if outcome.problems:
        raise CutoverUnconfirmedError(
            "the cutover ran to its end, but Kafka does not confirm a serving cluster: "
            + "; ".join(f"{p['code']}: {p['message']}" for p in outcome.problems))
    return 0


_UNCONFIRMED = "unconfirmed"  # the journal fact: the problems of the run that finished


def _remember_verdict(options: OnlineOptions, problems: list[dict[str, Any]]) -> None:
    """Keep in the journal what Kafka did not confirm when this run finished the migration, so
    that a re-run of the same command, which finds it done, repeats that verdict (exit 4)
    instead of a bare "already completed" with exit 0 over a cluster nobody saw serve.

    Raises:
        JournalWriteError: the journal cannot be written (exit 3).
    """
    journal = Journal.load(options.journal_dir)
    if journal is not None and journal.phase is Phase.DONE:
        journal.save(facts={**journal.facts, _UNCONFIRMED: problems})


def _repeat_verdict(options: OnlineOptions, outcome: OnlineOutcome, sink: _ConsoleSink) -> None:
    """A re-run over a finished migration: the problems the finishing run saw, if any, are the
    re-run's too (it does not ask Kafka again)."""
    journal = Journal.load(options.journal_dir)
    earlier = [] if journal is None else list(journal.facts.get(_UNCONFIRMED) or [])
    if earlier:
        outcome.problems = earlier
        sink.say("the run that finished this migration could not confirm a serving cluster ("
                 + ", ".join(str(p.get("code")) for p in earlier) + "); a re-run does not "
                 "ask Kafka again: check the cluster as those problems say (`zk2kraft verify` "
                 "judges the metadata, Kafka's own tools the brokers)")


def _canary_for(args: argparse.Namespace, options: OnlineOptions, sink: _ConsoleSink
                ) -> tuple[Canary | None, dict[str, Any] | None]:
    """The canary (`--bootstrap-server`), and the client config to ask the brokers with after
    the handoff when there is no canary.

    A run whose journal is at or past `fencing` resumes a migration whose fence may have
    applied: ZooKeeper's controller is then fenced and no controller serves until the handoff,
    so the canary's warm-up (controller requests served) cannot pass. Refusing there stopped the
    re-run the tool's own advice asks for (exit 3, "the cluster must be healthy before the
    cutover") before it could finish the handoff or say who took over (issue 16, seen in a
    killed-with-brokers rehearsal, docs/design/standin-recovery.md). Such a run goes on without the
    canary's window figures and still asks the brokers after the handoff.

    Raises:
        CanaryError: no broker answered, or the warm-up failed before any fence (exit 3).
    """
    try:
        return start_canary(args.bootstrap_server, args.command_config, sink.say), None
    except CanaryError as exc:
        try:
            journal = Journal.load(options.journal_dir)
        except ValueError:
            journal = None  # the run itself reports a damaged journal
        if journal is None or not journal.at_least(Phase.FENCING):
            raise
        sink.say(f"canary: {exc}. The journal ({journal.path}) is in phase {journal.phase}: an "
                 "earlier run may have fenced ZooKeeper's controller, so no controller serves "
                 "until the handoff; going on without the canary (no window figures), and the "
                 "brokers are asked after the handoff")
        config: dict[str, Any] = {"bootstrap.servers": args.bootstrap_server}
        if args.command_config is not None:
            config.update(librdkafka_config(read_properties(
                args.command_config, flag="--command-config"), args.command_config)[0])
        return None, config


def _write_failed_report(args: argparse.Namespace, options: OnlineOptions,
                         exc: BaseException) -> None:
    """The `--json`/`--html` report of a run an error ended: status `failed`, the message and
    the exit code it ends with. A report that cannot be written is logged, never raised over
    the error that ended the run."""
    from migrate.cli.exit_codes import ending_exit_code

    if args.json is None and getattr(args, "html", None) is None:
        return
    outcome = OnlineOutcome(cutover=options.cutover,
                            error={"message": str(exc) or type(exc).__name__,
                                   "exit_code": ending_exit_code(exc)})
    if options.standin is not None:
        outcome.transport = options.standin.to_json()
    try:
        if args.json is not None:
            write_json_report(args.json, outcome.to_json())
        if getattr(args, "html", None) is not None:
            write_report("--html", args.html,
                         online_html(outcome, None, source=args.zookeeper).encode("utf-8"))
    except Exception:  # noqa: BLE001 - the run's own error is what the operator must see
        logging.getLogger(__name__).exception("the report of the failed run was not written")


def _print(console: Console, outcome: OnlineOutcome, *, source: str) -> None:
    from verify import render_plan

    if outcome.summary is not None and outcome.summary.report.blockers:
        s = outcome.summary
        render_plan(console, blockers=s.report.blockers, warnings=s.report.warnings,
                    records=s.records, brokers=s.brokers, topics=s.topics,
                    partitions=s.partitions, source=source,
                    title="zk2kraft migrate (online)", records_title="records of the migration")
        return
    doc = outcome.to_json()
    window = doc["window_ms"]
    assert isinstance(window, dict)

    def ms(v: object) -> str:
        return "n/a" if v is None else f"{v:.1f} ms"

    transport = outcome.transport
    lines = [
        f"cutover ({outcome.cutover}) complete" if not outcome.already_done
        else "cutover had already completed",
        f"  window: tool (t1-t0) {ms(window['tool'])}, total (t2-t0) {ms(window['total'])}",
        f"  records: pre-copy {outcome.precopy_records}, mirrored {outcome.mirrored_records} "
        f"in {outcome.mirror_steps} step(s) from {outcome.changes_seen} notification(s), "
        f"final delta {outcome.delta_records}; log ends at offset {outcome.last_offset}",
        "  phases: " + ", ".join(f"{k} {ms(v)}" for k, v in outcome.phase_ms.items()),
    ]
    if outcome.fence is not None:
        lines.append(f"  fence: /controller_epoch {outcome.fence['controller_epoch']} "
                     f"(znode version {outcome.fence['epoch_zk_version']}); /migration version "
                     f"{outcome.migration_zk_version}")
    if transport.get("kind") == "standin":
        lines.append(f"  transport: stand-in {transport['node_id']} at {transport['listen']} "
                     "led the controllers through Kafka's Raft; durable = committed")
    if outcome.handover is not None:
        lines.append(f"  handover: controller {outcome.handover['new_leader']} leads epoch "
                     f"{outcome.handover['new_epoch']} ({ms(outcome.handover['elapsed_ms'])} "
                     "after EndQuorumEpoch)")
    lines.append("  voters: " + ", ".join(f"{v['node_id']} {v['state']}"
                                         + (f" ({v['error']})" if v["error"] else "")
                                         for v in outcome.voters))
    if window.get("observed", None) is not None or "producer_stall" in window:
        lines.append(f"  window as clients felt it: observed {ms(window.get('observed'))} "
                     f"(longest gap between served controller requests), first request "
                     f"served {ms(window.get('clients_t2'))} after the fence; producer "
                     f"stall {ms(window.get('producer_stall'))}")
    if outcome.problems:
        lines[0] = (f"cutover ({outcome.cutover}) ran to its end, but Kafka does NOT confirm a "
                    "serving cluster (exit 4):")
        lines[1:1] = [f"  {p['code']}: {p['message']}" for p in outcome.problems]
    if outcome.session_expiries:
        lines.append(f"  ZooKeeper session expired {outcome.session_expiries} time(s); the whole "
                     "tree was re-read each time")
    for line in lines:
        console.print(line, markup=False, highlight=False)
