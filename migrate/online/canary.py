"""The canary: the cutover window as Kafka's clients feel it (`migrate --bootstrap-server`).

zk2kraft's own clock says when *it* fenced ZooKeeper's controller (t0) and when the drain was
committed (t1); it cannot see when the cluster answers controller requests again. The canary
asks the brokers, through librdkafka (confluent-kafka; docs/design.md says why), the way a
client would:

* **Controller-bound requests every 50 ms**: an IncrementalAlterConfigs of the canary topic's
  `retention.ms` (a new value each time, so every request is a real metadata change). ZooKeeper
  brokers in migration mode forward it to the active controller (Kafka enables forwarding with
  `zookeeper.metadata.migration.enable`): to ZooKeeper's controller before the fence, to the
  KRaft controller once it has told the brokers it leads. Requests are sent on a fixed cadence
  whether or not earlier ones answered, so a stalled controller shows as a gap in the
  *completion* times. `window_ms.observed` is the longest gap between consecutive successful
  completions that ends after t0; the first success of a request sent after t0 is the client's
  t2 (migration-mode brokers report a random live broker as the controller id once the
  controller is KRaft, so the id in Metadata responses is not a signal; the canary records the
  ids it saw, for the record).
* **A produce/consume loop**: an idempotent producer with acks=all sends a numbered record every
  10 ms to the canary topic and a consumer reads them back. The producer's stall is the longest
  gap between consecutive delivery acknowledgements ending after t0; every acknowledged record
  must be consumed (missing and duplicated numbers are reported).

The canary topic (`zk2kraft-canary`, one partition, replicated to up to three brokers) is
created if absent and left in place, so it migrates like any other topic.

Waits end on their condition, not on a clock alone: waiting for t2 and the drain at the end
(outstanding records delivered, every acknowledged record consumed) stop early once both the
producer and the consumer have had librdkafka report every broker down (`_ALL_BROKERS_DOWN`,
cleared by the next delivery or record read): then nothing more can be delivered or consumed,
and waiting out the timeouts only delayed the report (issue 16's brokers killed after the
handoff waited a full 60 s drain).
"""

from __future__ import annotations

import argparse
import gc
import logging
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from migrate.errors import BadFlagError, CanaryError
from migrate.flags.standin import parse_host_port

__all__ = ["CANARY_TOPIC", "Canary", "CanaryError", "CanaryReport", "check_bootstrap_servers"]

CANARY_TOPIC = "zk2kraft-canary"
_ADMIN_INTERVAL_S = 0.05
_PRODUCE_INTERVAL_S = 0.01
_MAX_IN_FLIGHT = 400
_REQUEST_TIMEOUT_S = 60.0
_METADATA_INTERVAL_S = 0.25
_TIMELINE_BEFORE_S = 2.0
"""The report's request timeline starts this long before t0 (sent, done, outcome per request)."""


def _gap(times: list[float], after: float) -> tuple[float, float, float] | None:
    """The longest gap (ms, start, end) between consecutive times that ends after `after`."""
    best: tuple[float, float, float] | None = None
    ordered = sorted(times)
    for prev, cur in zip(ordered, ordered[1:], strict=False):
        if cur < after:
            continue
        if best is None or cur - prev > best[0] / 1000.0:
            best = ((cur - prev) * 1000.0, prev, cur)
    return best


@dataclass
class CanaryReport:
    """What the canary saw; all times relative to t0 (the fence), in ms."""

    observed_ms: float | None
    gap_from_ms: float | None
    gap_to_ms: float | None
    t2_ms: float | None
    producer_stall_ms: float | None
    requests_sent: int
    requests_ok: int
    request_errors: dict[str, int]
    produced: int
    acked: int
    produce_errors: dict[str, int]
    consumed: int
    missing: int
    duplicates: int
    controller_ids: list[tuple[float, int]] = field(default_factory=list)
    observed_is_lower_bound: bool = False
    timeline: list[tuple[float, float, str]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        def r(v: float | None) -> float | None:
            return None if v is None else round(v, 3)

        return {
            "observed_ms": r(self.observed_ms),
            "gap_ms": [r(self.gap_from_ms), r(self.gap_to_ms)],
            "t2_ms": r(self.t2_ms),
            "producer_stall_ms": r(self.producer_stall_ms),
            "requests": {"sent": self.requests_sent, "ok": self.requests_ok,
                         "errors": dict(self.request_errors)},
            "records": {"produced": self.produced, "acked": self.acked,
                        "errors": dict(self.produce_errors), "consumed": self.consumed,
                        "missing": self.missing, "duplicates": self.duplicates},
            "observed_is_lower_bound": self.observed_is_lower_bound,
            "controller_ids": [[r(t), n] for t, n in self.controller_ids],
            "timeline": [[r(a), r(b), what] for a, b, what in sorted(self.timeline)],
        }


class Canary:
    """Controller requests and a produce/consume loop against the brokers, on our clock.

    Args:
        bootstrap: `--bootstrap-server` (`host:port[,host:port]`).
        client_config: librdkafka security settings (`migrate.flags.client_config`).
        clock: the run's monotonic clock (t0/t1/t2 share it).
        topic: the canary topic.
    """

    def __init__(self, bootstrap: str, client_config: dict[str, str] | None = None, *,
                 clock: Callable[[], float] = time.monotonic, topic: str = CANARY_TOPIC) -> None:
        self.bootstrap = bootstrap
        # librdkafka's own log lines go to our logger (shown with -v), not onto the terminal.
        self.config: dict[str, Any] = {"bootstrap.servers": bootstrap, **(client_config or {}),
                                       "logger": logging.getLogger("zk2kraft.canary")}
        self.clock = clock
        self.topic = topic
        self._stop = threading.Event()
        self._consumer_ready = threading.Event()
        self._consumer_stop = threading.Event()
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._sent: list[float] = []
        self._ok: list[tuple[float, float]] = []  # (sent, done)
        self._req_errors: dict[str, int] = {}
        self._failed: list[tuple[float, float, str]] = []
        self._in_flight = 0
        self._produced = 0
        self._acks: list[float] = []
        self._acked: set[int] = set()
        self._prod_errors: dict[str, int] = {}
        self._consumed: dict[int, int] = {}
        self._controller_ids: list[tuple[float, int]] = []
        self._run = uuid.uuid4().hex[:8]
        self._admin: Any = None
        # client -> librdkafka reported every broker down and nothing was served since
        self._down = {"produce": False, "consume": False}
        self._drain_until = 0.0  # the producer's flush ends by then (set by stop)

    # -- start -----------------------------------------------------------------------------

    def start(self, timeout_s: float = 60.0) -> None:
        """Create the canary topic if needed and start the three loops.

        Raises:
            CanaryError: no broker answered within `timeout_s`, or the topic cannot be made.
        """
        from confluent_kafka import KafkaException
        from confluent_kafka.admin import AdminClient

        self._admin = AdminClient({**self.config, "client.id": "zk2kraft-canary-admin"})
        try:
            meta = self._admin.list_topics(timeout=timeout_s)
        except KafkaException as exc:
            raise CanaryError(f"--bootstrap-server {self.bootstrap}: no broker answered within "
                              f"{timeout_s:g}s ({exc.args[0]})") from None
        if self.topic not in meta.topics:
            self._create_topic(len(meta.brokers), timeout_s)
        self._wait_leader(timeout_s)
        # The consumer first: it starts at the end offset as it is before our first record.
        for target, name in ((self._consume_loop, "consume"), (self._admin_loop, "admin"),
                             (self._produce_loop, "produce"), (self._metadata_loop, "metadata")):
            t = threading.Thread(target=target, name=f"zk2kraft-canary-{name}", daemon=True)
            t.start()
            self._threads.append(t)
            if name == "consume" and not self._consumer_ready.wait(timeout_s):
                self._stop.set()
                self._consumer_stop.set()
                raise CanaryError(f"the canary's consumer could not read {self.topic}'s "
                                  f"offsets within {timeout_s:g}s")

    def warm_up(self, timeout_s: float = 60.0, served: int = 20) -> None:
        """Wait until `served` controller requests and as many records went through, so the
        figures have a steady state before the cutover to compare with.

        Raises:
            CanaryError: the cluster did not serve them within `timeout_s`.
        """
        deadline = self.clock() + timeout_s
        while self.clock() < deadline:
            with self._lock:
                if len(self._ok) >= served and len(self._acks) >= served:
                    return
            time.sleep(0.05)
        with self._lock:
            errors = dict(self._req_errors)
        self.stop(None, drain_timeout_s=0)
        raise CanaryError(f"the brokers at {self.bootstrap} served {len(self._ok)} of {served} "
                          f"canary controller requests and acknowledged {len(self._acks)} "
                          f"records within {timeout_s:g}s (errors: {errors or 'none'}); the "
                          "cluster must be healthy before the cutover")

    def _create_topic(self, brokers: int, timeout_s: float) -> None:
        from confluent_kafka import KafkaError, KafkaException
        from confluent_kafka.admin import NewTopic

        new = NewTopic(self.topic, num_partitions=1, replication_factor=max(1, min(3, brokers)))
        try:
            self._admin.create_topics([new], request_timeout=timeout_s)[self.topic].result(
                timeout_s)
        except KafkaException as exc:
            if exc.args[0].code() != KafkaError.TOPIC_ALREADY_EXISTS:
                raise CanaryError(f"--bootstrap-server {self.bootstrap}: cannot create the "
                                  f"canary topic {self.topic} ({exc.args[0]})") from None

    def _wait_leader(self, timeout_s: float) -> None:
        deadline = self.clock() + timeout_s
        while self.clock() < deadline:
            topic = self._admin.list_topics(self.topic, timeout=timeout_s).topics.get(self.topic)
            if topic is not None and topic.error is None and topic.partitions and \
                    all(p.leader >= 0 for p in topic.partitions.values()):
                return
            time.sleep(0.1)  # waiting for the controller to elect the new topic's leader
        raise CanaryError(f"the canary topic {self.topic} has no leader after {timeout_s:g}s")

    # -- brokers down ----------------------------------------------------------------------

    def _error_cb(self, client: str) -> Callable[[Any], None]:
        """librdkafka's `error_cb` for one client: notes `_ALL_BROKERS_DOWN`."""
        from confluent_kafka import KafkaError

        def on_error(err: Any) -> None:
            if err.code() == KafkaError._ALL_BROKERS_DOWN:
                with self._lock:
                    self._down[client] = True

        return on_error

    def brokers_down(self) -> bool:
        """Both the producer and the consumer saw every broker down, and neither has been
        served since (a delivery, a record read): nothing more can reach or leave them."""
        with self._lock:
            return all(self._down.values())

    # -- loops -----------------------------------------------------------------------------

    def _admin_loop(self) -> None:
        from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource

        n = 0
        next_at = self.clock()
        while not self._stop.is_set():
            with self._lock:
                busy = self._in_flight >= _MAX_IN_FLIGHT
            if not busy:
                n += 1
                value = str(7 * 24 * 3600 * 1000 + n)
                res = ConfigResource(ConfigResource.Type.TOPIC, self.topic, incremental_configs=[
                    ConfigEntry("retention.ms", value,
                                incremental_operation=AlterConfigOpType.SET)])
                sent = self.clock()
                with self._lock:
                    self._sent.append(sent)
                    self._in_flight += 1
                futures = self._admin.incremental_alter_configs(
                    [res], request_timeout=_REQUEST_TIMEOUT_S)
                for f in futures.values():
                    f.add_done_callback(lambda fut, s=sent: self._request_done(fut, s))
            next_at += _ADMIN_INTERVAL_S
            self._stop.wait(max(0.0, next_at - self.clock()))

    def _request_done(self, fut: Any, sent: float) -> None:
        done = self.clock()
        exc = fut.exception()
        with self._lock:
            self._in_flight -= 1
            if exc is None:
                self._ok.append((sent, done))
            else:
                err = exc.args[0] if exc.args else exc
                name = err.name() if hasattr(err, "name") else type(exc).__name__
                self._req_errors[name] = self._req_errors.get(name, 0) + 1
                self._failed.append((sent, done, name))

    def _metadata_loop(self) -> None:
        """The controller id the brokers report (Metadata responses), whenever it changes."""
        last: int | None = None
        while not self._stop.wait(_METADATA_INTERVAL_S):
            try:
                cid = self._admin.list_topics(self.topic, timeout=5).controller_id
            except Exception:  # noqa: BLE001 - a broker may not answer during the cutover
                continue
            if cid != last:
                last = cid
                with self._lock:
                    self._controller_ids.append((self.clock(), cid))

    def _produce_loop(self) -> None:
        from confluent_kafka import Producer

        producer = Producer({**self.config, "acks": "all", "enable.idempotence": True,
                             "linger.ms": 0, "delivery.timeout.ms": 300000,
                             "client.id": "zk2kraft-canary-producer",
                             "error_cb": self._error_cb("produce")})

        def delivered(err: Any, msg: Any) -> None:
            now = self.clock()
            seq = int(msg.value())
            with self._lock:
                if err is None:
                    self._acks.append(now)
                    self._acked.add(seq)
                    self._down["produce"] = False
                else:
                    self._prod_errors[err.name()] = self._prod_errors.get(err.name(), 0) + 1

        next_at = self.clock()
        while not self._stop.is_set():
            self._produced += 1
            producer.produce(self.topic, key=self._run.encode(),
                             value=str(self._produced).encode(), on_delivery=delivered)
            next_at += _PRODUCE_INTERVAL_S
            producer.poll(max(0.0, next_at - self.clock()))
        # the records still outstanding, until delivered or undeliverable (stop's drain)
        while len(producer) and self.clock() < self._drain_until and not self.brokers_down():
            producer.flush(0.1)

    def _consume_loop(self) -> None:
        from confluent_kafka import OFFSET_END, Consumer, KafkaException, TopicPartition

        consumer = Consumer({**self.config, "group.id": f"zk2kraft-canary-{self._run}",
                             "enable.auto.commit": False, "auto.offset.reset": "earliest",
                             "client.id": "zk2kraft-canary-consumer",
                             "error_cb": self._error_cb("consume")})
        # Only this run's records: start at the end as it was before the first produce.
        try:
            # A broker whose metadata lags (a loaded ZooKeeper controller) may not know the new
            # topic yet: ask again until start()'s own deadline gives up on us.
            high = None
            while high is None and not self._consumer_stop.is_set():
                try:
                    _, high = consumer.get_watermark_offsets(TopicPartition(self.topic, 0),
                                                             timeout=10)
                except KafkaException:
                    self._consumer_stop.wait(0.5)
            if high is None:
                return
            consumer.assign([TopicPartition(self.topic, 0, high if high >= 0 else OFFSET_END)])
            self._consumer_ready.set()
            while not self._consumer_stop.is_set():
                msg = consumer.poll(0.1)
                if msg is None or msg.error() is not None:
                    continue
                if msg.key() != self._run.encode():
                    continue
                value = msg.value()
                if value is None:
                    continue
                seq = int(value)
                with self._lock:
                    self._consumed[seq] = self._consumed.get(seq, 0) + 1
                    self._down["consume"] = False
        finally:
            consumer.close()

    # -- finish ----------------------------------------------------------------------------

    def wait_for_t2(self, t0: float, timeout_s: float, settle_s: float = 2.0) -> bool:
        """Wait until a request sent after `t0` succeeded, then `settle_s` more (gaps after
        the first success count too); False if none succeeded within `timeout_s`, or once every
        broker is down (`brokers_down`: no request can succeed then)."""
        deadline = self.clock() + timeout_s
        while self.clock() < deadline:
            with self._lock:
                ok = any(sent >= t0 for sent, _ in self._ok)
            if ok:
                time.sleep(settle_s)
                return True
            if self.brokers_down():
                return False
            time.sleep(0.02)
        return False

    def stop(self, t0: float | None, drain_timeout_s: float = 60.0) -> CanaryReport:
        """Stop sending, let the outstanding records be delivered and the consumer catch up
        with every acknowledged record (for at most `drain_timeout_s`, less once every broker
        is down: `brokers_down`), report."""
        deadline = self.clock() + drain_timeout_s
        self._drain_until = deadline
        self._stop.set()
        for t in self._threads:
            if t.name != "zk2kraft-canary-consume":
                t.join(drain_timeout_s + 10)
        while self.clock() < deadline and not self.brokers_down():
            with self._lock:
                if self._acked <= self._consumed.keys():
                    break
            time.sleep(0.05)
        self._consumer_stop.set()
        for t in self._threads:
            t.join(10)
        self._release_admin()
        return self._report(t0)

    def _release_admin(self) -> None:
        """Destroy the admin client now, while the interpreter is whole. Left to the exit, its
        librdkafka threads can call our log callback during Python's finalisation: one CI run's
        `migrate` printed its whole report and then died of SIGSEGV (exit -11), a known way
        for confluent-kafka handles to end."""
        admin, self._admin = self._admin, None
        del admin
        gc.collect()

    def _report(self, t0: float | None) -> CanaryReport:
        with self._lock:
            done = [d for _, d in self._ok]
            origin = t0 if t0 is not None else (min(done) if done else 0.0)
            lower_bound = not any(d < origin for d in done)
            # No request served before t0: the gap is counted from t0 (a lower bound).
            gap = _gap(done + ([origin] if lower_bound else []), origin)
            after = [d for s, d in self._ok if s >= origin]
            stall = _gap(self._acks, origin)
            missing = len(self._acked - self._consumed.keys())
            dups = sum(c - 1 for c in self._consumed.values() if c > 1)
            return CanaryReport(
                observed_ms=None if gap is None else gap[0],
                gap_from_ms=None if gap is None else (gap[1] - origin) * 1000.0,
                gap_to_ms=None if gap is None else (gap[2] - origin) * 1000.0,
                t2_ms=(min(after) - origin) * 1000.0 if after and t0 is not None else None,
                producer_stall_ms=None if stall is None else stall[0],
                requests_sent=len(self._sent), requests_ok=len(self._ok),
                request_errors=dict(self._req_errors), produced=self._produced,
                acked=len(self._acked), produce_errors=dict(self._prod_errors),
                consumed=len(self._consumed), missing=missing, duplicates=dups,
                controller_ids=[((t - origin) * 1000.0, c) for t, c in self._controller_ids],
                observed_is_lower_bound=lower_bound,
                timeline=[((s - origin) * 1000.0, (d - origin) * 1000.0, "ok")
                          for s, d in self._ok if d >= origin - _TIMELINE_BEFORE_S]
                + [((s - origin) * 1000.0, (d - origin) * 1000.0, e)
                   for s, d, e in self._failed if d >= origin - _TIMELINE_BEFORE_S])


def check_bootstrap_servers(bootstrap: str | None) -> None:
    """`--bootstrap-server`'s syntax, with the other flags: HOST:PORT[,HOST:PORT...] (an
    optional `PROTOCOL://` before each, as Kafka's clients take it), every port 1..65535.

    Raises:
        BadFlagError: a malformed entry (exit 2), before anything waits on the brokers.
    """
    if bootstrap is None:
        return
    entries = [e.strip() for e in bootstrap.split(",") if e.strip()]
    if not entries:
        raise BadFlagError(f"--bootstrap-server {bootstrap!r}: expected HOST:PORT[,HOST:PORT]")
    for entry in entries:
        try:
            parse_host_port("--bootstrap-server", entry.split("://", 1)[-1])
        except argparse.ArgumentTypeError as exc:
            raise BadFlagError(str(exc) + (f" (in {bootstrap!r})" if len(entries) > 1 else "")
                               ) from None


def start_canary(bootstrap: str | None, command_config: str | None,
                 say: Callable[[str], None], *,
                 clock: Callable[[], float] = time.monotonic) -> Canary | None:
    """`--bootstrap-server` given: start the canary (None otherwise).

    Raises:
        BadFlagError: --command-config without --bootstrap-server, or an unusable file (exit 2).
        CanaryError: no broker answered (exit 3).
    """
    from migrate.flags.client_config import librdkafka_config, read_properties

    if bootstrap is None:
        if command_config is not None:
            raise BadFlagError("--command-config needs --bootstrap-server")
        return None
    config: dict[str, str] = {}
    if command_config is not None:
        config, ignored = librdkafka_config(
            read_properties(command_config, flag="--command-config"), command_config)
        if ignored:
            say(f"canary: --command-config keys with no librdkafka counterpart ignored: "
                f"{', '.join(ignored)}")
    canary = Canary(bootstrap, config, clock=clock)
    canary.start()
    canary.warm_up()
    say(f"canary: controller requests every {_ADMIN_INTERVAL_S * 1000:.0f} ms and acks=all "
        f"records every {_PRODUCE_INTERVAL_S * 1000:.0f} ms on topic {canary.topic} via "
        f"{bootstrap}")
    return canary


def finish_canary(canary: Canary, t0: float | None, timeout_s: float,
                  say: Callable[[str], None]) -> CanaryReport:
    """After the run: wait for the clients' t2 (when there was a fence), stop, report."""
    if t0 is not None and not canary.wait_for_t2(t0, timeout_s):
        say(f"canary: no controller request sent after the fence succeeded within "
            f"{timeout_s:g}s: window_ms.observed is only a lower bound")
    report = canary.stop(t0)
    if report.missing or report.duplicates:
        say(f"canary: WARNING: {report.missing} acknowledged record(s) never consumed, "
            f"{report.duplicates} consumed twice")
    return report


def window_figures(report: CanaryReport) -> dict[str, float | None]:
    """The keys the canary adds to the report's `window_ms`."""
    doc = report.to_json()
    return {"observed": doc["observed_ms"], "producer_stall": doc["producer_stall_ms"],
            "clients_t2": doc["t2_ms"]}
