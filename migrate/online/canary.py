"""The canary: the cutover window as Kafka's clients feel it (`migrate --bootstrap-server`).

zk2kraft's own clock says when *it* fenced ZooKeeper's controller (t0) and when the drain was
committed (t1); it cannot see when the cluster answers controller requests again. The canary
asks the brokers, through librdkafka (confluent-kafka; docs/design/window.md says why), the way a
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
from typing import Any

from migrate.errors import BadFlagError, CanaryError
from migrate.flags.standin import parse_host_port
from migrate.online.canary_tally import CanaryReport, CanaryTally

log = logging.getLogger(__name__)

__all__ = ["CANARY_TOPIC", "Canary", "CanaryError", "CanaryReport", "check_bootstrap_servers",
           "run_paced"]

CANARY_TOPIC = "zk2kraft-canary"
_ADMIN_INTERVAL_S = 0.05
_PRODUCE_INTERVAL_S = 0.01
_MAX_IN_FLIGHT = 400
_REQUEST_TIMEOUT_S = 60.0
_METADATA_INTERVAL_S = 0.25
# A consumer that reads nothing for this long while acknowledged records wait is replaced by a
# new one at the next offset: librdkafka's fetcher can stall after partition leadership moves
# (the rehearsals' own clients saw it), and a stalled canary would report acknowledged records
# as missing, a loss that did not happen.
_CONSUMER_STALL_S = 30.0
# The recount at the end (`Canary._recount`) reads at most this long.
_RECOUNT_S = 60.0


def _close_aside(consumer: Any) -> threading.Thread:
    """Close a consumer on a thread of its own: librdkafka's close of a consumer whose fetcher
    stalled may itself block, and the loop must go on with the replacement meanwhile."""
    closing = threading.Thread(target=consumer.close, name="zk2kraft-canary-close", daemon=True)
    closing.start()
    return closing


def run_paced(send: Callable[[], None], poll: Callable[[float], Any],
              clock: Callable[[], float], interval_s: float, stop: threading.Event) -> None:
    """Call `send()` once every `interval_s` on `clock` until `stop` is set, serving the
    client's events with `poll(timeout)` in between.

    librdkafka's `poll` returns as soon as it has served one event, long before its timeout
    when a delivery report comes back, so the wait goes on until the next send is due: one
    `poll` per send made the cadence the cluster's round trip (over 400 records a second in
    one rehearsal, 156,946 in all, where the docs promise one every 10 ms). Sends that fell
    behind (a stalled process) are caught up at once, so the count stays the clock's.
    """
    next_at = clock()
    while not stop.is_set():
        send()
        next_at += interval_s
        while not stop.is_set() and (left := next_at - clock()) > 0:
            poll(left)


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
        self._threads: list[threading.Thread] = []
        self._tally = CanaryTally()  # what the loops saw; the report is made of it
        self._run = uuid.uuid4().hex[:8]
        self._admin: Any = None
        self._drain_until = 0.0  # the producer's flush ends by then (set by stop)
        self._first_offset: int | None = None  # where this run's records begin (the consumer's)
        self._closing: list[threading.Thread] = []  # stalled consumers' closes (`_close_aside`)

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
            requests_ok, acks = self._tally.served()
            if requests_ok >= served and acks >= served:
                return
            time.sleep(0.05)
        errors = self._tally.request_errors()
        self.stop(None, drain_timeout_s=0)
        requests_ok, acks = self._tally.served()
        raise CanaryError(f"the brokers at {self.bootstrap} served {requests_ok} of {served} "
                          f"canary controller requests and acknowledged {acks} "
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
                self._tally.all_brokers_down(client)

        return on_error

    def brokers_down(self) -> bool:
        """Both the producer and the consumer saw every broker down, and neither has been
        served since (a delivery, a record read): nothing more can reach or leave them."""
        return self._tally.brokers_down()

    # -- loops -----------------------------------------------------------------------------

    def _admin_loop(self) -> None:
        from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource

        n = 0

        def send() -> None:
            nonlocal n
            if self._tally.in_flight() >= _MAX_IN_FLIGHT:
                return
            n += 1
            value = str(7 * 24 * 3600 * 1000 + n)
            res = ConfigResource(ConfigResource.Type.TOPIC, self.topic, incremental_configs=[
                ConfigEntry("retention.ms", value, incremental_operation=AlterConfigOpType.SET)])
            sent = self.clock()
            self._tally.request_sent(sent)
            futures = self._admin.incremental_alter_configs(
                [res], request_timeout=_REQUEST_TIMEOUT_S)
            for f in futures.values():
                f.add_done_callback(lambda fut, s=sent: self._request_done(fut, s))

        # the admin client's callbacks run on its own threads: between sends, only wait
        run_paced(send, self._stop.wait, self.clock, _ADMIN_INTERVAL_S, self._stop)

    def _request_done(self, fut: Any, sent: float) -> None:
        done = self.clock()
        exc = fut.exception()
        name: str | None = None
        if exc is not None:
            err = exc.args[0] if exc.args else exc
            name = err.name() if hasattr(err, "name") else type(exc).__name__
        self._tally.request_done(sent, done, name)

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
                self._tally.controller_seen(self.clock(), cid)

    def _produce_loop(self) -> None:
        from confluent_kafka import Producer

        producer = Producer({**self.config, "acks": "all", "enable.idempotence": True,
                             "linger.ms": 0, "delivery.timeout.ms": 300000,
                             "client.id": "zk2kraft-canary-producer",
                             "error_cb": self._error_cb("produce")})

        def delivered(err: Any, msg: Any) -> None:
            now = self.clock()
            seq = int(msg.value())
            self._tally.record_delivered(now, seq, None if err is None else err.name())

        def send() -> None:
            producer.produce(self.topic, key=self._run.encode(),
                             value=str(self._tally.next_record()).encode(), on_delivery=delivered)

        run_paced(send, producer.poll, self.clock, _PRODUCE_INTERVAL_S, self._stop)
        # the records still outstanding, until delivered or undeliverable (stop's drain)
        while len(producer) and self.clock() < self._drain_until and not self.brokers_down():
            producer.flush(0.1)

    def _new_consumer(self, *, recount: bool = False) -> Any:
        from confluent_kafka import Consumer

        role = "recount" if recount else "consumer"
        group = f"zk2kraft-canary-{self._run}" + ("-recount" if recount else "")
        config = {**self.config, "group.id": group,
                  "enable.auto.commit": False, "auto.offset.reset": "earliest",
                  "client.id": f"zk2kraft-canary-{role}"}
        if not recount:  # the recount's errors must not touch the every-broker-down signal
            config["error_cb"] = self._error_cb("consume")
        return Consumer(config)

    def _our_record(self, msg: Any) -> int | None:
        """The number of a record this run produced, None for anyone else's."""
        value = msg.value()
        if msg.key() != self._run.encode() or value is None:
            return None
        return int(value)

    def _consume_loop(self) -> None:
        from confluent_kafka import OFFSET_END, KafkaException, TopicPartition

        consumer = self._new_consumer()
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
            next_offset = high if high >= 0 else OFFSET_END
            self._first_offset = high if high >= 0 else None
            consumer.assign([TopicPartition(self.topic, 0, next_offset)])
            self._consumer_ready.set()
            progress = self.clock()  # the last record read, or the last time none was owed
            while not self._consumer_stop.is_set():
                msg = consumer.poll(0.1)
                if msg is None or msg.error() is not None:
                    if self._tally.all_acked_consumed():
                        progress = self.clock()
                    elif self.clock() - progress > _CONSUMER_STALL_S:
                        self._closing.append(_close_aside(consumer))
                        consumer = self._new_consumer()
                        consumer.assign([TopicPartition(self.topic, 0, next_offset)])
                        self._tally.consumer_replaced()
                        progress = self.clock()
                    continue
                progress = self.clock()
                next_offset = msg.offset() + 1
                if (seq := self._our_record(msg)) is not None:
                    self._tally.record_consumed(seq)
        finally:
            consumer.close()

    # -- finish ----------------------------------------------------------------------------

    def wait_for_t2(self, t0: float, timeout_s: float, settle_s: float = 2.0) -> bool:
        """Wait until a request sent after `t0` succeeded, then `settle_s` more (gaps after
        the first success count too); False if none succeeded within `timeout_s`, or once every
        broker is down (`brokers_down`: no request can succeed then)."""
        deadline = self.clock() + timeout_s
        while self.clock() < deadline:
            if self._tally.served_since(t0):
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
            if self._tally.all_acked_consumed():
                break
            time.sleep(0.05)
        self._consumer_stop.set()
        for t in self._threads:
            t.join(10)
        if not self._tally.all_acked_consumed() and not self.brokers_down():
            self._recount(self.clock() + _RECOUNT_S)
        for closing in self._closing:  # ended now, not at the interpreter's exit (see below)
            closing.join(10)
        self._release_admin()
        return self._tally.report(t0)

    def _recount(self, deadline: float) -> None:
        """The records the consumer still owed, read once more by a new consumer from this
        run's first offset to the high watermark: a consumer that stalled (however it stalled,
        replaced or not) must not make records the log holds count as missing. One local
        rehearsal's consumer left 2,981 of 9,818 unread after its 240 s drain, while the
        partition's log on both brokers held all 9,818, once each."""
        from confluent_kafka import KafkaException, TopicPartition

        if self._first_offset is None:
            return
        counts: dict[int, int] = {}
        consumer = self._new_consumer(recount=True)
        try:
            _, high = consumer.get_watermark_offsets(
                TopicPartition(self.topic, 0), timeout=max(1.0, deadline - self.clock()))
            consumer.assign([TopicPartition(self.topic, 0, self._first_offset)])
            at = self._first_offset
            while at < high and self.clock() < deadline:
                msg = consumer.poll(0.5)
                if msg is None or msg.error() is not None:
                    continue
                at = msg.offset() + 1
                if (seq := self._our_record(msg)) is not None:
                    counts[seq] = counts.get(seq, 0) + 1
            self._tally.recounted(counts, whole=at >= high)
        except KafkaException as exc:
            log.info("canary: the recount failed: %s", exc)
        finally:
            consumer.close()

    def _release_admin(self) -> None:
        """Destroy the admin client now, while the interpreter is whole. Left to the exit, its
        librdkafka threads can call our log callback during Python's finalisation: one CI run's
        `migrate` printed its whole report and then died of SIGSEGV (exit -11), a known way
        for confluent-kafka handles to end."""
        admin, self._admin = self._admin, None
        del admin
        gc.collect()


def check_bootstrap_servers(bootstrap: str | None) -> list[tuple[str, int]]:
    """`--bootstrap-server`'s syntax, with the other flags: HOST:PORT[,HOST:PORT...] (an
    optional `PROTOCOL://` before each, as Kafka's clients take it), every port 1..65535.
    `migrate` and `plan` both check theirs here.

    Returns:
        The (host, port) of each entry, in order; none without the flag.

    Raises:
        BadFlagError: a malformed entry (exit 2), before anything waits on the brokers.
    """
    if bootstrap is None:
        return []
    entries = [e.strip() for e in bootstrap.split(",") if e.strip()]
    if not entries:
        raise BadFlagError(f"--bootstrap-server {bootstrap!r}: expected HOST:PORT[,HOST:PORT]")
    addresses = []
    for entry in entries:
        try:
            addresses.append(parse_host_port("--bootstrap-server", entry.split("://", 1)[-1]))
        except argparse.ArgumentTypeError as exc:
            raise BadFlagError(str(exc) + (f" (in {bootstrap!r})" if len(entries) > 1 else "")
                               ) from None
    return addresses


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
