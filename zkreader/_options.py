"""How to reach ZooKeeper: Kafka's `zookeeper.connect` plus the client-side security options."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ConnectOptions"]


@dataclass(frozen=True, slots=True)
class ConnectOptions:
    """Everything needed to open a kazoo session the way a Kafka broker would.

    Attributes:
        connect: `host:port[,host:port...][/chroot]` (Kafka's `zookeeper.connect`).
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

    def __repr__(self) -> str:  # secrets stay out of logs and tracebacks
        return (
            f"ConnectOptions(connect={self.connect!r}, timeout_s={self.timeout_s}, "
            f"tls={self.tls})"
        )
