"""ZooKeeper sessions: the only place a kazoo client is created, configured and mapped.

Kazoo is untyped and raises its own exception tree; everything above this module sees a typed
`ZkSession` and zkreader errors only (style: foreign errors are translated where they enter).
The connect string is Kafka's `zookeeper.connect` (`host:port[,host:port...][/chroot]`), parsed
and validated before any socket is opened so a typo is exit 2, not a 30-second hang (exit 3).
"""

from __future__ import annotations

import logging
import select
import threading
import time
from collections.abc import Callable
from typing import Any

from kazoo.client import KazooClient, KazooState
from kazoo.exceptions import (
    AuthFailedError,
    ConnectionClosedError,
    ConnectionLoss,
    KazooException,
    NoAuthError,
    NoNodeError,
    OperationTimeoutError,
    SessionExpiredError,
)
from kazoo.handlers.threading import KazooTimeoutError, SequentialThreadingHandler
from kazoo.handlers.utils import fileobj_to_fd
from kazoo.protocol.states import Callback, KeeperState
from kazoo.protocol.states import ZnodeStat as KazooStat
from kazoo.retry import KazooRetry
from tenacity import Retrying, retry_if_exception_type, stop_after_delay, wait_exponential

from zkreader._log_redaction import install_kazoo_redaction
from zkreader._model import ZnodeStat
from zkreader._options import ConnectOptions
from zkreader._watch import ChangeFeed
from zkreader.errors import (
    BadConnectStringError,
    ZkReaderError,
    ZkSessionExpiredError,
    ZkUnreachableError,
)

__all__ = [
    "ZkSession",
    "map_kazoo_error",
    "open_session",
    "session_for_client",
    "to_stat",
]

log = logging.getLogger(__name__)
install_kazoo_redaction()  # no znode payload in kazoo's DEBUG records (design I7)

_RETRYABLE = (ConnectionLoss, OperationTimeoutError)


def to_stat(stat: KazooStat) -> ZnodeStat:
    """Convert kazoo's Stat into the model's `ZnodeStat`."""
    return ZnodeStat(
        czxid=stat.czxid,
        mzxid=stat.mzxid,
        version=stat.version,
        ctime_ms=stat.ctime,
        mtime_ms=stat.mtime,
        ephemeral_owner=stat.ephemeralOwner,
        num_children=stat.numChildren,
    )


def map_kazoo_error(exc: BaseException, path: str | None = None) -> ZkReaderError:
    """Translate a kazoo (or socket) exception into the zkreader error tree.

    Args:
        exc: what kazoo raised or set on an async result.
        path: the znode being read, named in the message when known.

    Returns:
        The zkreader error to raise (`raise map_kazoo_error(e, p) from e`).
    """
    where = f" reading {path}" if path else ""
    if isinstance(exc, ZkReaderError):
        return exc
    if isinstance(exc, NoAuthError | AuthFailedError):
        return ZkUnreachableError(
            f"not authorized{where}: check --zk-digest / --zk-sasl credentials "
            f"({type(exc).__name__})"
        )
    if isinstance(exc, SessionExpiredError):
        # said for every command: only the online mirror holds watches, and it says so itself
        return ZkSessionExpiredError(f"ZooKeeper session expired{where}; re-run")
    if isinstance(exc, ConnectionLoss | ConnectionClosedError | KazooTimeoutError | OSError
                  | OperationTimeoutError):
        return ZkUnreachableError(f"lost the ZooKeeper connection{where} ({type(exc).__name__})")
    return ZkReaderError(f"ZooKeeper error{where}: {type(exc).__name__} {exc}")


class ZkSession:
    """A connected ZooKeeper session with typed, retrying reads.

    Kazoo's client is reachable as `kazoo` for the pipeline (which issues `*_async` calls and
    its own protocol requests); everything else should go through the methods here.

    Attributes:
        chroot: the session's chroot ("" for none); every path passed in is relative to it.
        retry_s: how long reads retry a lost connection before raising `ZkUnreachableError`.
    """

    def __init__(self, client: KazooClient, *, chroot: str, owned: bool, retry_s: float) -> None:
        self._client = client
        self._owned = owned
        self.chroot = chroot
        self.retry_s = retry_s
        self.expired = threading.Event()
        self._changes: ChangeFeed | None = None
        client.add_listener(self._on_state)

    def _on_state(self, state: str) -> bool:
        if state == KazooState.LOST:
            self.expired.set()
        return False

    @property
    def state(self) -> str:
        """The session as the status lines show it: "connected", "suspended" (the connection
        dropped; kazoo is reconnecting, the session may still live) or "lost" (expired or
        closed). Read from kazoo's own state, so a dead ZooKeeper shows before any request
        waits on it."""
        if self.expired.is_set():
            return "lost"
        state = self._client.state
        if state == KazooState.CONNECTED:
            return "connected"
        return "suspended" if state == KazooState.SUSPENDED else "lost"

    def call(self, send: Callable[[], Any], path: str | None = None, *,
             missing_ok: bool = False, timeout_s: float | None = None) -> Any:
        """One ZooKeeper request under a deadline that no unanswered request can bypass.

        kazoo's blocking calls (`sync`, `get`, `transaction().commit()`) wait on their reply
        with no timeout, and a request made while the connection is down waits in kazoo's queue
        until it reconnects: with ZooKeeper dead that is forever, and a retry loop around such
        a call never gets to its own deadline. Here the request is sent with kazoo's async call
        (`send` returns its `IAsyncResult`) and every wait on the reply is bounded by what is
        left of the deadline; a lost connection sends it again until then. Only for requests
        that may be sent twice (reads, `sync`); a write's reply is awaited with `wait`.

        Args:
            send: issues the request, e.g. `lambda: client.get_async(path)`.
            path: the znode, named in the error.
            missing_ok: a NoNodeError answers None instead of raising.
            timeout_s: the deadline, from now (default `retry_s`, i.e. --zk-timeout).

        Raises:
            ZkUnreachableError: no answer within the deadline, or the session expired.
            ZkReaderError: any other ZooKeeper error.
        """
        limit = self.retry_s if timeout_s is None else timeout_s
        deadline = time.monotonic() + limit
        # kazoo queues a request made while it reconnects: resend with a short backoff until
        # the deadline; every wait on a reply is itself cut at the deadline (`wait`), so the
        # retryer's own stop is always reached.
        retryer = Retrying(
            retry=retry_if_exception_type(_RETRYABLE),
            stop=stop_after_delay(limit),
            wait=wait_exponential(multiplier=0.05, max=1.0),
            reraise=True,
        )
        try:
            return retryer(lambda: self.wait(send(), path, deadline=deadline, limit_s=limit))
        except NoNodeError:
            if missing_ok:
                return None
            raise map_kazoo_error(NoNodeError(), path) from None
        except _RETRYABLE as exc:
            raise map_kazoo_error(exc, path) from exc

    def wait(self, reply: Any, path: str | None = None, *, deadline: float,
             limit_s: float) -> Any:
        """Wait for one request's reply (`reply`: its `IAsyncResult`) until `deadline`
        (`time.monotonic()`); ConnectionLoss and OperationTimeoutError are raised as kazoo's
        (the caller decides whether the request may be sent again), everything else mapped.

        Raises:
            ZkUnreachableError: no reply by the deadline (`limit_s` is named in the message).
        """
        try:
            return reply.get(timeout=max(0.0, deadline - time.monotonic()))
        except KazooTimeoutError:
            where = f" to a request on {path}" if path else ""
            raise ZkUnreachableError(
                f"no reply from ZooKeeper{where} within {limit_s:.3g}s (--zk-timeout; ZooKeeper "
                f"session {self.state})") from None
        except (*_RETRYABLE, NoNodeError):
            raise
        except KazooException as exc:
            raise map_kazoo_error(exc, path) from exc

    def sync(self, path: str = "/", *, timeout_s: float | None = None) -> None:
        """`sync()` under a deadline (`call`): the server this session talks to has applied
        every write the leader committed before it.

        Raises:
            ZkUnreachableError: as `call`.
        """
        self.call(lambda: self._client.sync_async(path), path, timeout_s=timeout_s)

    @property
    def changes(self) -> ChangeFeed:
        """The session's change feed: watch notifications of every znode read with watches.

        Created on first use and attached to the client, so the watches are re-armed after a
        reconnect. Cutover code drains it (design I3).
        """
        if self._changes is None:
            self._changes = ChangeFeed()
            self._changes.attach(self._client)
        return self._changes

    @property
    def kazoo(self) -> KazooClient:
        """The underlying kazoo client (for zkreader's pipeline only)."""
        return self._client

    def requests_written(self) -> bool:
        """True when every request handed to kazoo has been written to the socket.

        kazoo queues a request and its connection thread writes it, moving it from the queue to
        the pending replies only once the whole frame was sent. Crash tests wait for this before
        killing the process with a multi-op in flight, so the request really left it."""
        return not self._client._queue

    def run_queued_watch_callbacks(self, timeout_s: float = 30.0) -> None:
        """Return once kazoo's callback thread has run every watch callback queued so far.

        kazoo's connection thread hands a notification to the callback thread's queue but wakes
        a caller waiting on a reply (e.g. `sync()`) directly, so after a reply the notifications
        that came before it on the wire may not be in the `ChangeFeed` yet. The queue is FIFO
        and served by one thread: a marker queued now runs after all of them.

        Raises:
            ZkUnreachableError: the callback thread did not get to the marker in `timeout_s`.
        """
        reached = threading.Event()
        self._client.handler.dispatch_callback(Callback("watch", reached.set, ()))
        if not reached.wait(timeout_s):
            raise ZkUnreachableError(
                f"ZooKeeper's notifications were not delivered within {timeout_s:g}s (kazoo's "
                "callback thread is stuck); re-run the same command (it resumes from the journal "
                "and compares the whole tree)")

    def check_alive(self) -> None:
        """Raise if the session expired (watches armed so far are gone: I3 no longer holds).

        Raises:
            ZkUnreachableError: the session was lost.
        """
        if self.expired.is_set():
            raise ZkUnreachableError("ZooKeeper session expired during the read; re-run")

    def get(self, path: str, watch: Callable[[Any], object] | None = None, *,
            timeout_s: float | None = None) -> tuple[bytes, ZnodeStat] | None:
        """Read one znode (None when it does not exist), optionally arming a data watch.

        Raises:
            ZkUnreachableError / ZkReaderError: as `call` (bounded by `timeout_s`).
        """
        got = self.call(lambda: self._client.get_async(path, watch=watch), path,
                        missing_ok=True, timeout_s=timeout_s)
        if got is None:
            return None
        data, stat = got
        return data, to_stat(stat)

    def get_children(self, path: str, *, timeout_s: float | None = None) -> list[str] | None:
        """List a znode's children (None when it does not exist).

        Raises:
            ZkUnreachableError / ZkReaderError: as `call` (bounded by `timeout_s`).
        """
        got = self.call(lambda: self._client.get_children_async(path), path, missing_ok=True,
                        timeout_s=timeout_s)
        return None if got is None else list(got)

    def close(self) -> None:
        """Stop and close the kazoo client if this session created it."""
        self._client.remove_listener(self._on_state)
        if self._changes is not None:
            self._changes.detach()
        if self._owned:
            try:
                self._client.stop()
            finally:
                self._client.close()

    def __enter__(self) -> ZkSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_POLLIN, _POLLOUT = select.POLLIN, select.POLLOUT


class PollHandler(SequentialThreadingHandler):  # type: ignore[misc]  # kazoo is untyped
    """Kazoo's threading handler, waiting on its sockets with one `poll` per wait.

    Kazoo's I/O thread waits before every send, every receive and every loop turn, and its
    default `select` builds and closes an epoll instance each time (three system calls and the
    `selectors` machinery): a third of the I/O thread's busy time in a profiled
    100,000-partition read, 11 us per wait against 1.7 us here. Same contract as kazoo's
    `selector_select`: (readable, writable, []) file objects, an error or hang-up counts as
    readable (the following recv then reports it), and the same errors for a closed socket
    or a negative timeout.
    """

    def select(self, rlist: list[Any], wlist: list[Any], xlist: list[Any],
               timeout: float | None = None) -> tuple[list[Any], list[Any], list[Any]]:
        poller = select.poll()
        objects: dict[int, list[Any]] = {}
        masks: dict[int, int] = {}
        for group, mask in ((rlist, _POLLIN), (wlist, _POLLOUT)):
            for obj in group:
                fd = fileobj_to_fd(obj)
                objects.setdefault(fd, []).append(obj)
                masks[fd] = masks.get(fd, 0) | mask
        for fd, mask in masks.items():
            poller.register(fd, mask)
        if timeout is None:
            ms = -1
        elif timeout < 0:
            raise ValueError("timeout must be non-negative")
        else:
            ms = int(timeout * 1000 + 0.999)  # round up, as selectors does
        readable: list[Any] = []
        writable: list[Any] = []
        for fd, events in poller.poll(ms):
            if events & ~_POLLOUT:
                readable.extend(objects[fd])
            elif events & ~_POLLIN:
                writable.extend(objects[fd])
        return readable, writable, []


def _kazoo_kwargs(options: ConnectOptions) -> dict[str, Any]:
    kwargs: dict[str, Any] = {}
    if options.digest is not None:
        if ":" not in options.digest:
            raise BadConnectStringError("--zk-digest: expected USER:PASSWORD")
        kwargs["auth_data"] = [("digest", options.digest)]
    if options.sasl:
        try:
            import puresasl  # noqa: F401  (kazoo needs it for SASL)
        except ImportError:
            raise BadConnectStringError(
                "--zk-sasl needs the 'pure-sasl' package (pip install pure-sasl)") from None
        sasl: dict[str, Any] = {"mechanism": options.sasl_mechanism}
        if options.sasl_username is not None:
            sasl["username"] = options.sasl_username
        if options.sasl_password is not None:
            sasl["password"] = options.sasl_password
        kwargs["sasl_options"] = sasl
    if options.tls:
        # Kafka verifies the server certificate always and the host name unless
        # zookeeper.ssl.endpoint.identification.algorithm is empty (our --zk-tls-no-verify).
        kwargs.update(use_ssl=True, verify_certs=True, check_hostname=options.tls_verify)
        for key, value in (("ca", options.tls_ca), ("certfile", options.tls_cert),
                           ("keyfile", options.tls_key)):
            if value is not None:
                kwargs[key] = value
    return kwargs


def open_session(options: ConnectOptions) -> ZkSession:
    """Connect to ZooKeeper as a Kafka broker configured with `options` would.

    Use as a context manager: `with open_session(opts) as session: ...`.

    Raises:
        BadConnectStringError: the connect string or an auth flag is invalid, or the chroot
            does not exist.
        ZkUnreachableError: no session within `options.timeout_s`, or authentication failed.
    """
    parsed = options.parsed  # parsed once, when the options were built
    kwargs = _kazoo_kwargs(options)
    timeout = options.timeout_s
    client = KazooClient(
        hosts=",".join(parsed.hosts) + parsed.chroot,
        timeout=min(max(timeout, 4.0), 30.0),
        connection_retry=KazooRetry(max_tries=-1, delay=0.05, max_delay=1.0),
        handler=PollHandler(),
        **kwargs,
    )
    log.info("connecting to ZooKeeper %s (timeout %.1fs)", parsed.kazoo_hosts, timeout)
    login = _LoginWatch(client)
    client.add_listener(login)
    try:
        # not kazoo's `start`: it waits on an event a refused login may set and clear before
        # the wait begins, and then sleeps the whole time-out (seen: 34 s for a wrong password)
        client.start_async()
        login.settled.wait(timeout)
    except Exception as exc:  # SSL errors ...
        _discard(client)
        raise map_kazoo_error(exc) from exc
    if login.refused or not client.connected:
        _discard(client)
        if login.refused:
            raise map_kazoo_error(AuthFailedError())
        raise ZkUnreachableError(
            f"--zookeeper {options.connect!r}: no ZooKeeper session within {timeout:g}s")
    session = ZkSession(client, chroot=parsed.chroot, owned=True, retry_s=timeout)
    # One round trip before returning: kazoo reports "connected" before SASL has finished, and
    # its first request waits for it, so a rejected SASL login surfaces here (exit 3) rather
    # than halfway through a read. It also checks that the chroot exists.
    try:
        exists = session.call(lambda: client.exists_async("/"), parsed.chroot or "/")
    except ZkReaderError:
        session.close()
        if login.refused:
            raise map_kazoo_error(AuthFailedError()) from None
        raise
    finally:
        client.remove_listener(login)
    if parsed.chroot:
        if exists is None:
            session.close()
            raise BadConnectStringError(
                f"--zookeeper {options.connect!r}: chroot {parsed.chroot} does not exist")
    return session


class _LoginWatch:
    """A kazoo state listener that remembers whether ZooKeeper refused the credentials.

    Kazoo says "connected" before its SASL or digest login has finished, and a refused login
    then closes the client: a caller waking late finds it closed, and a request finds it closed
    (`ConnectionClosedError`). Either would read as "unreachable" when the truth is "not
    authorized". Kazoo calls listeners in its connection thread right after it records the
    refusal, so `client_state` read here is exact. `settled` is set at the first "connected"
    or "lost", whichever comes first.
    """

    def __init__(self, client: KazooClient) -> None:
        self._client = client
        self.refused = False
        self.settled = threading.Event()

    def __call__(self, state: str) -> bool:
        if state == KazooState.LOST and self._client.client_state == KeeperState.AUTH_FAILED:
            self.refused = True
        if state != KazooState.SUSPENDED:
            self.settled.set()
        return False


def _discard(client: KazooClient) -> None:
    try:
        client.stop()
        client.close()
    except Exception:  # noqa: BLE001 - best effort on an already failed client
        log.debug("closing a failed kazoo client", exc_info=True)


def session_for_client(client: KazooClient, *, retry_s: float = 15.0) -> ZkSession:
    """Wrap an already started kazoo client (tests, the sample generator); not closed on exit.

    Args:
        client: a started `KazooClient`; its chroot (if any) is kept.
        retry_s: how long reads retry a lost connection.
    """
    return ZkSession(client, chroot=client.chroot or "", owned=False, retry_s=retry_s)
