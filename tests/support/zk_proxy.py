"""A TCP relay in front of a real ZooKeeper server that loses one chosen multi-op or its reply.

Crash tests need a multi-op that left the tool (the tool is killed once kazoo wrote it to the
socket) and that ZooKeeper never received, as when the network or the server loses it; fault
tests need the connection to die with a multi-op in flight, its request or its reply lost. The
relay forwards ZooKeeper's frames unchanged both ways (they are length-prefixed: a 4-byte
length, then for a request the xid and the op type), except the first client request that is a
multi-op (`OpCode.multi`, 14, ZooKeeper's `ZooDefs.OpCode`) and whose bytes `drop` accepts:

* default: that request is swallowed and nothing the client sends after it is forwarded (a
  partition, from then on);
* `cut=True`: the connection is closed right there (the client sees a connection loss and
  reconnects through the relay, which forwards everything from then on); with `deliver=True`
  the request reaches ZooKeeper first, and only its reply is lost with the connection;
* `hold=True`: the request is held back, as a congested network holds it, and nothing the client
  sends after it is forwarded; the connection to ZooKeeper stays open even after the client
  dies, the relay pinging on the client's behalf (OpCode.ping, 11, xid -2) so ZooKeeper keeps
  its session, until `release()` delivers the held request on it: ZooKeeper then applies it,
  however long after the client that sent it was killed.
"""

from __future__ import annotations

import socket
import struct
import threading
from collections.abc import Callable
from types import TracebackType

MULTI = 14
PING = struct.pack(">iii", 8, -2, 11)  # length 8, xid -2, OpCode.ping: ZooKeeper's keep-alive


def _read_exact(sock: socket.socket, n: int) -> bytes | None:
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


class LosingRelay:
    """`LosingRelay(connect, drop)`: `relay.connect` goes through it (chroot kept).

    Attributes:
        dropped: set once the chosen multi-op was swallowed.
    """

    def __init__(self, connect: str, drop: Callable[[bytes], bool], *, cut: bool = False,
                 deliver: bool = False, hold: bool = False) -> None:
        hostport, slash, chroot = connect.partition("/")
        host, _, port = hostport.split(",")[0].rpartition(":")
        self._target = (host, int(port))
        self._drop = drop
        self._cut = cut
        self._deliver = deliver
        self._hold = hold
        self.held = b""  # with hold=True: the held request's bytes (length prefix included)
        self._held_on: socket.socket | None = None
        self._closed = threading.Event()
        self._sending = threading.Lock()  # whole frames: pings and the release never interleave
        self.dropped = threading.Event()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.connect = f"127.0.0.1:{self._listener.getsockname()[1]}{slash}{chroot}"
        self._socks: list[socket.socket] = [self._listener]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            server = socket.create_connection(self._target)
            self._socks += [client, server]
            muted = threading.Event()  # set: this connection's replies are lost
            threading.Thread(target=self._requests, args=(client, server, muted),
                             daemon=True).start()
            threading.Thread(target=self._replies, args=(server, client, muted),
                             daemon=True).start()

    def _requests(self, client: socket.socket, server: socket.socket,
                  muted: threading.Event) -> None:
        first = True  # the ConnectRequest: no xid, no op type
        try:
            while True:
                head = _read_exact(client, 4)
                if head is None:
                    break
                body = _read_exact(client, struct.unpack(">i", head)[0])
                if body is None:
                    break
                if self.dropped.is_set() and not self._cut:
                    continue
                if (not first and not self.dropped.is_set() and len(body) >= 8
                        and struct.unpack(">i", body[4:8])[0] == MULTI and self._drop(body)):
                    if self._deliver:
                        muted.set()
                        server.sendall(head + body)
                    if self._hold:
                        self.held, self._held_on = head + body, server
                        threading.Thread(target=self._keep_alive, args=(server,),
                                         daemon=True).start()
                    self.dropped.set()
                    if self._cut:
                        break
                    continue
                first = False
                server.sendall(head + body)
        except OSError:
            pass
        finally:
            if self._held_on is not server:  # a held request keeps its connection open
                _shut(server)
            if self._cut:
                _shut(client)

    @staticmethod
    def _replies(server: socket.socket, client: socket.socket, muted: threading.Event) -> None:
        try:
            while chunk := server.recv(65536):
                if muted.is_set():
                    break
                client.sendall(chunk)
        except OSError:
            pass
        finally:
            _shut(client)

    def _keep_alive(self, server: socket.socket) -> None:
        """Ping for the (maybe dead) client, so ZooKeeper keeps the session the held request
        belongs to (a session times out without traffic, even on an open connection)."""
        while not self._closed.wait(0.5):
            try:
                with self._sending:
                    server.sendall(PING)
            except OSError:
                return

    def release(self) -> None:
        """Deliver the held request to ZooKeeper on its own connection (hold=True)."""
        assert self._held_on is not None, "no request is held"
        with self._sending:
            self._held_on.sendall(self.held)

    def close(self) -> None:
        self._closed.set()
        for s in self._socks:
            _shut(s)
            s.close()

    def __enter__(self) -> LosingRelay:
        return self

    def __exit__(self, et: type[BaseException] | None, ev: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


def _shut(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
