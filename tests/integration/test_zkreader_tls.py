"""TLS sessions against a real ZooKeeper with a secure client port (Netty, PEM stores, client
certificates required): the reader connects with --zk-tls-ca/cert/key and reads a tree; a client
without a certificate, or one that does not trust the server, gets no session (exit 3)."""

from __future__ import annotations

import datetime
import ipaddress
import json
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from kazoo.client import KazooClient

import tests.support.zk as zk_support
from tests.support.ports import free_ports
from tests.support.zk import _BASE_CFG, ZkProcess, ZkStartError
from zkreader import ConnectOptions, ZkUnreachableError, open_session, read_cluster


def _name(cn: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def _cert(subject: str, key: ec.EllipticCurvePrivateKey, issuer: str,
          issuer_key: ec.EllipticCurvePrivateKey, *, ca: bool) -> x509.Certificate:
    now = datetime.datetime.now(datetime.UTC)
    builder = (x509.CertificateBuilder().subject_name(_name(subject)).issuer_name(_name(issuer))
               .public_key(key.public_key()).serial_number(x509.random_serial_number())
               .not_valid_before(now - datetime.timedelta(minutes=5))
               .not_valid_after(now + datetime.timedelta(days=1))
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if not ca:
        builder = builder.add_extension(x509.SubjectAlternativeName(
            [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False)
    return builder.sign(issuer_key, hashes.SHA256())


def _pem_key(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def _pem_cert(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def make_pki(where: Path, ca_name: str = "zk2kraft-test-ca") -> dict[str, Path]:
    """A CA, a server key+cert (127.0.0.1) and a client key+cert, as PEM files."""
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = _cert(ca_name, ca_key, ca_name, ca_key, ca=True)
    files: dict[str, Path] = {"ca": where / f"{ca_name}.pem"}
    files["ca"].write_bytes(_pem_cert(ca))
    for who in ("server", "client"):
        key = ec.generate_private_key(ec.SECP256R1())
        cert = _cert(who, key, ca_name, ca_key, ca=False)
        files[f"{who}_key"] = where / f"{who}.key"
        files[f"{who}_cert"] = where / f"{who}.crt"
        files[f"{who}_key"].write_bytes(_pem_key(key))
        files[f"{who}_cert"].write_bytes(_pem_cert(cert))
        # ZooKeeper's PEM key store: private key and certificate in one file
        (where / f"{who}.keystore.pem").write_bytes(_pem_key(key) + _pem_cert(cert))
    return files


# Debian's zookeeper.jar names only part of Netty in its manifest Class-Path; the secure port
# (NettyServerCnxnFactory) also needs these.
NETTY_EXTRA = ["netty-codec.jar", "netty-resolver.jar", "netty-transport-native-unix-common.jar"]


class _NettyZkProcess(ZkProcess):
    """The harness's ZooKeeper process with the rest of Netty on its classpath."""

    def spawn(self) -> None:
        base = zk_support.zookeeper_classpath
        extra = ":".join(f"/usr/share/java/{j}" for j in NETTY_EXTRA)
        zk_support.zookeeper_classpath = lambda: f"{base()}:{extra}"  # type: ignore[assignment]
        try:
            super().spawn()
        finally:
            zk_support.zookeeper_classpath = base  # type: ignore[assignment]


class TlsZk:
    """A standalone ZooKeeper with a plain port (for ruok and setup) and a TLS port."""

    def __init__(self) -> None:
        self.workdir = Path(tempfile.mkdtemp(prefix="zk2kraft-zk-tls-"))
        self.pki = make_pki(self.workdir)
        plain, secure = free_ports(2)
        self.plain = f"127.0.0.1:{plain}"
        self.secure = f"127.0.0.1:{secure}"
        cfg = (_BASE_CFG + f"clientPort={plain}\nsecureClientPort={secure}\n"
               "serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory\n"
               f"ssl.keyStore.location={self.workdir / 'server.keystore.pem'}\n"
               "ssl.keyStore.type=PEM\n"
               f"ssl.trustStore.location={self.pki['ca']}\n"
               "ssl.trustStore.type=PEM\n"
               "ssl.clientAuth=need\n")
        self.node = _NettyZkProcess(sid=0, client_port=plain, workdir=self.workdir, config=cfg,
                              heap="256m")


@pytest.fixture(scope="module")
def tls_zk() -> Iterator[TlsZk]:
    server = TlsZk()
    server.node.spawn()
    try:
        server.node.wait_ruok()
    except ZkStartError as exc:
        server.node.stop()
        pytest.fail(f"ZooKeeper with TLS could not start: {exc}", pytrace=False)
    yield server
    server.node.stop()


def test_reads_over_tls_with_a_client_certificate(tls_zk: TlsZk) -> None:
    setup = KazooClient(tls_zk.plain)
    setup.start(timeout=10)
    try:
        setup.create("/tls/brokers/topics/t", json.dumps(
            {"version": 3, "partitions": {"0": [1]}, "topic_id": "Xpp3Z_egYWE0W-6cpvtoGg"}
        ).encode(), makepath=True)
    finally:
        setup.stop()
        setup.close()
    pki = tls_zk.pki
    opts = ConnectOptions(f"{tls_zk.secure}/tls", timeout_s=10, tls=True, tls_ca=str(pki["ca"]),
                          tls_cert=str(pki["client_cert"]), tls_key=str(pki["client_key"]))
    with open_session(opts) as session:
        snap = read_cluster(session)
    assert list(snap.topics) == ["t"]


def test_tls_without_client_certificate_or_trust_is_unreachable(tls_zk: TlsZk,
                                                                tmp_path: Path) -> None:
    pki = tls_zk.pki
    no_cert = ConnectOptions(tls_zk.secure, timeout_s=3, tls=True, tls_ca=str(pki["ca"]))
    with pytest.raises(ZkUnreachableError):
        open_session(no_cert)
    other_ca = make_pki(tmp_path, "some-other-ca")["ca"]
    untrusted = ConnectOptions(tls_zk.secure, timeout_s=3, tls=True, tls_ca=str(other_ca),
                               tls_cert=str(pki["client_cert"]), tls_key=str(pki["client_key"]))
    with pytest.raises(ZkUnreachableError):
        open_session(untrusted)
