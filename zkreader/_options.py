"""How to reach ZooKeeper: Kafka's `zookeeper.connect` plus the client-side security options.

The connect string is parsed exactly once, when `ConnectOptions` is built: a typo is refused
there (exit 2, before any socket opens) and `open_session` uses the parsed hosts and chroot.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from zkreader.errors import BadConnectStringError

__all__ = ["ConnectOptions", "ParsedConnect", "parse_connect"]

_HOSTPORT = re.compile(r"^(?:\[(?P<v6>[0-9A-Fa-f:.%a-zA-Z]+)\]|(?P<host>[A-Za-z0-9_.\-]+))"
                       r"(?::(?P<port>[0-9]+))?$")
DEFAULT_PORT = 2181


@dataclass(frozen=True, slots=True)
class ParsedConnect:
    """A validated `zookeeper.connect` value.

    Attributes:
        hosts: `host:port` pairs, in the given order (IPv6 hosts in brackets).
        chroot: the chroot path ("" for none), normalised without a trailing slash.
    """

    hosts: tuple[str, ...]
    chroot: str

    @property
    def kazoo_hosts(self) -> str:
        """The form kazoo expects: `h:p,h:p/chroot`."""
        return ",".join(self.hosts) + self.chroot


def parse_connect(connect: str) -> ParsedConnect:
    """Parse and validate Kafka's `zookeeper.connect` form.

    Args:
        connect: `host:port[,host:port...][/chroot]`; a port defaults to 2181 as in ZooKeeper.

    Returns:
        The hosts and chroot.

    Raises:
        BadConnectStringError: empty, a bad host or port, or an invalid chroot path; the message
            quotes the flag value.
    """
    def bad(problem: str) -> BadConnectStringError:
        return BadConnectStringError(f"--zookeeper {connect!r}: {problem}")

    text = connect.strip()
    if not text:
        raise bad("empty connect string")
    slash = text.find("/")
    host_part, chroot = (text, "") if slash < 0 else (text[:slash], text[slash:])
    if chroot:
        if chroot == "/":
            chroot = ""
        else:
            chroot = chroot.rstrip("/")
            parts = chroot.split("/")[1:]
            if any(p in ("", ".", "..") for p in parts):
                raise bad(f"chroot {chroot!r} is not a valid znode path")
            if any(ch in chroot for ch in "\x00\t\n\r "):
                raise bad(f"chroot {chroot!r} contains a control or space character")
    hosts = []
    for item in host_part.split(","):
        item = item.strip()
        m = _HOSTPORT.match(item)
        if not item or not m:
            raise bad(f"{item!r} is not host:port")
        port = int(m.group("port")) if m.group("port") else DEFAULT_PORT
        if not 0 < port < 65536:
            raise bad(f"port {port} of {item!r} is outside 1..65535")
        host = f"[{m.group('v6')}]" if m.group("v6") else m.group("host")
        hosts.append(f"{host}:{port}")
    return ParsedConnect(hosts=tuple(hosts), chroot=chroot)



@dataclass(frozen=True, slots=True)
class ConnectOptions:
    """Everything needed to open a kazoo session the way a Kafka broker would.

    Attributes:
        connect: `host:port[,host:port...][/chroot]` (Kafka's `zookeeper.connect`).
        parsed: `connect`, parsed and validated when the options were built.
        timeout_s: give up (exit 3) if no session is established within this time.
        digest: `user:password` for digest auth, or None. A secret: never logged.
        sasl: use SASL (Kerberos/DIGEST-MD5 per the JAAS-like options of kazoo), or not.
        sasl_mechanism / sasl_username / sasl_password: SASL parameters (password is a secret).
        tls: connect with TLS (ZooKeeper's secure client port).
        tls_ca / tls_cert / tls_key: PEM files for TLS; tls_verify=False skips hostname checks.
    """

    connect: str
    timeout_s: float = 15.0
    digest: str | None = None
    sasl: bool = False
    sasl_mechanism: str = "DIGEST-MD5"
    sasl_username: str | None = None
    sasl_password: str | None = None
    tls: bool = False
    tls_ca: str | None = None
    tls_cert: str | None = None
    tls_key: str | None = None
    tls_verify: bool = True
    parsed: ParsedConnect = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        """Parse `connect` now (raises `BadConnectStringError`), so nothing parses it again."""
        object.__setattr__(self, "parsed", parse_connect(self.connect))

    def __repr__(self) -> str:  # secrets stay out of logs and tracebacks
        return (
            f"ConnectOptions(connect={self.connect!r}, timeout_s={self.timeout_s}, "
            f"tls={self.tls})"
        )
