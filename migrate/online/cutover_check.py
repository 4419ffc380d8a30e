"""After the handoff: does Kafka confirm a working cluster? (`migrate --cutover now|manual`).

zk2kraft's own steps (fence, drain, `/migration`, the new leader's claim of `/controller`) can all
succeed over a cluster whose brokers are gone: issue 16 saw exit 0 and "cutover complete" while
every broker had shut down. So the run ends with what Kafka itself reports, and any of these is
a problem that ends it with exit 4 (`CutoverUnconfirmedError`) and a report naming it:

* `BROKERS_UNREGISTERED_AT_FENCE`: with the stand-in and `--fence-without-brokers`, brokers
  ZooKeeper listed were not registered with it and fetching when it fenced (`--broker-wait` ran
  out); they register with the next controller only if their own Raft state agrees with it.
* `BROKERS_NOT_FOLLOWING`: with the stand-in, brokers registered at the fence whose fetches the
  new leader does not see after its claim (DescribeQuorum: their LastFetchTimestamp did not
  move), asked without `--bootstrap-server` too.
* `NO_CONTROLLER_CLAIM`: no KRaft controller claimed `/controller` within `--handoff-timeout`
  (with the stand-in, or when `--on-cutover` was to start the controllers).
* `ON_CUTOVER_FAILED`: the `--on-cutover` command exited non-zero.
* `ON_CUTOVER_STILL_RUNNING`: the `--on-cutover` command had not exited when `--handoff-timeout`
  ran out with no claim; it was left running (it may be a controller).
* `NO_CONTROLLER_REQUEST_SERVED`: the canary (`--bootstrap-server`) saw no controller-bound
  request served after the fence.
* `RECORDS_MISSING`: the canary's acknowledged records were not all consumed back.
* `BROKERS_NOT_SERVING`: after the canary stopped, the brokers, asked afresh, do not list every
  broker ZooKeeper listed at the fence or do not serve a controller-bound request (an
  IncrementalAlterConfigs, which migration-mode brokers forward to the KRaft controller once it
  has told them it leads; Metadata's controller id is no signal then, see `migrate.online.canary`).
* `WINDOW_OVER_BOUND`: the clients' observed window exceeded `--max-window`.

Without `--bootstrap-server` zk2kraft cannot ask the brokers; it says so (no problem is made up).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Problem", "brokers_serving", "cutover_problems"]


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing Kafka did not confirm: a stable code and a sentence of what was seen and what
    to do."""

    code: str
    message: str

    def to_json(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message}


def brokers_serving(config: dict[str, Any], brokers: Sequence[int], topic: str,
                    timeout_s: float) -> str | None:
    """Ask the brokers (librdkafka `config`, the canary's) until every broker in `brokers` is
    listed in Metadata and an IncrementalAlterConfigs of `topic` (controller-bound) is served.

    Returns:
        None when both held within `timeout_s`, else what was seen last.
    """
    from confluent_kafka.admin import (
        AdminClient,
        AlterConfigOpType,
        ConfigEntry,
        ConfigResource,
    )

    admin = AdminClient({**config, "client.id": "zk2kraft-confirm"})
    deadline = time.monotonic() + timeout_s
    seen = "nothing answered"
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return seen
            try:
                listed = sorted(admin.list_topics(timeout=min(5.0, left)).brokers)
                missing = sorted(set(brokers) - set(listed))
                if missing:
                    seen = f"Metadata lists broker(s) {listed}, not {missing}"
                else:
                    res = ConfigResource(ConfigResource.Type.TOPIC, topic, incremental_configs=[
                        ConfigEntry("retention.ms", str(7 * 24 * 3600 * 1000),
                                    incremental_operation=AlterConfigOpType.SET)])
                    for fut in admin.incremental_alter_configs(
                            [res], request_timeout=max(1.0, min(10.0, left))).values():
                        fut.result()
                    return None
            except Exception as exc:  # noqa: BLE001 - whatever librdkafka says is what was seen
                seen = f"{type(exc).__name__}: {exc}"
            time.sleep(0.5)
    finally:
        del admin


def cutover_problems(outcome: Any, *, broker_wait_s: float, handoff_timeout_s: float,
                     canary: dict[str, Any] | None, max_window_s: float | None,
                     ask_brokers: Callable[[Sequence[int]], str | None] | None,
                     bootstrap: str | None) -> list[Problem]:
    """What Kafka does not confirm after a cutover that ran (module docstring).

    Args:
        outcome: the run's `OnlineOutcome` (not refused, not already done).
        canary: the canary's report (`CanaryReport.to_json()`), None without one.
        ask_brokers: `brokers_serving` bound to the canary's config, None without one.
    """
    out: list[Problem] = []
    unregistered = outcome.brokers_unregistered or []
    if unregistered:
        out.append(Problem(
            "BROKERS_UNREGISTERED_AT_FENCE",
            f"broker(s) {unregistered} were not registered with the stand-in and fetching when "
            f"it fenced ZooKeeper (--broker-wait {broker_wait_s:g}s ran out and "
            "--fence-without-brokers cut over even so). Check that each "
            "runs in migration mode (zookeeper.metadata.migration.enable=true, "
            "controller.quorum.voters naming the stand-in's slot) and that its log shows no "
            "'raftManager fault'; `kafka-metadata-quorum --bootstrap-controller HOST:PORT "
            "describe --replication` must list it as an observer of the new leader. A broker "
            "that shut down must be started again (it registers with the new controller)."))
    if outcome.brokers_not_following:
        out.append(Problem(
            "BROKERS_NOT_FOLLOWING",
            f"broker(s) {outcome.brokers_not_following} do not fetch from the new KRaft leader "
            "(its DescribeQuorum showed no new fetch from them within 30 s): check each "
            "broker's log for a 'raftManager fault' or a shutdown, start any that stopped, and "
            "check `kafka-metadata-quorum --bootstrap-controller HOST:PORT describe "
            "--replication` lists them as observers."))
    if outcome.on_cutover_exit not in (None, 0):
        out.append(Problem(
            "ON_CUTOVER_FAILED",
            f"the --on-cutover command exited {outcome.on_cutover_exit}: ZooKeeper is fenced, so "
            "the KRaft controllers it was to start are the cluster's only controller. Read its "
            "output above, start the controllers by hand if it did not (they find /migration "
            "and take over), and check that one claims /controller (`zookeeper-shell ... get "
            "/controller` shows a kraftControllerEpoch above ours); `zk2kraft verify` judges "
            "the metadata."))
    if outcome.on_cutover_still_running:
        out.append(Problem(
            "ON_CUTOVER_STILL_RUNNING",
            f"the --on-cutover command was still running after --handoff-timeout "
            f"{handoff_timeout_s:g}s and no controller had claimed /controller; it was left "
            "running (it may be a controller started in the foreground). Check its process "
            "and the controllers' logs for 'Loaded ZK migration state' or a fatal fault; if it "
            "hangs without starting them, stop it and start the controllers by hand (they find "
            "/migration and take over)."))
    claim_awaited = outcome.claim_awaited or outcome.transport.get("kind") == "standin"
    if claim_awaited and "claimed" not in outcome.stamps:
        out.append(Problem(
            "NO_CONTROLLER_CLAIM",
            f"no KRaft controller claimed /controller within --handoff-timeout "
            f"{handoff_timeout_s:g}s: ZooKeeper is fenced and no controller serves the "
            "cluster. Look at the controllers' logs for 'Loaded ZK migration state' and a fatal "
            "fault; re-running this command with the same --journal reports where things "
            "stand."))
    if canary is not None:
        if outcome.fence_at is not None and canary.get("t2_ms") is None:
            out.append(Problem(
                "NO_CONTROLLER_REQUEST_SERVED",
                "the canary saw no controller-bound request served after the fence: the "
                "brokers do not reach the new KRaft controller. Check the brokers' logs for "
                "their registration with it and for a 'raftManager fault'."))
        if canary.get("records", {}).get("missing"):
            out.append(Problem(
                "RECORDS_MISSING",
                f"{canary['records']['missing']} record(s) the canary's producer had "
                "acknowledged were not consumed back: a partition's data did not survive the "
                "cutover, or its brokers stopped serving. Check the brokers before anything "
                "else."))
        observed = canary.get("observed_ms")
        if max_window_s is not None and observed is not None and observed > max_window_s * 1000:
            out.append(Problem(
                "WINDOW_OVER_BOUND",
                f"the clients' window was {observed:,.0f} ms, over --max-window "
                f"{max_window_s:g}s: the cluster serves again, but slower than the operator's "
                "bound. window_ms.parts in the report (with --controller-log) says which part "
                "took the time."))
    if ask_brokers is not None:
        seen = ask_brokers(outcome.zk_brokers)
        if seen is not None:
            out.append(Problem(
                "BROKERS_NOT_SERVING",
                f"after the handoff the brokers at {bootstrap} do not serve: {seen}. Check "
                "each broker's log (a 'raftManager fault ... inconsistent with current leader' "
                "means its __cluster_metadata-0/quorum-state holds another quorum's leader) "
                "and start any that stopped."))
    return out
