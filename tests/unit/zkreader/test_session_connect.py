"""Kafka's `zookeeper.connect` parsing: good forms are normalised, bad ones are exit 2 and
quote the flag value; nothing here opens a socket."""

from __future__ import annotations

import pytest

from migrate.cli.exit_codes import exit_code_for
from zkreader import BadConnectStringError, ConnectOptions, open_session, parse_connect


@pytest.mark.parametrize(("connect", "hosts", "chroot"), [
    ("127.0.0.1:2181", ("127.0.0.1:2181",), ""),
    ("zk1:2181,zk2:2182,zk3:2183/kafka", ("zk1:2181", "zk2:2182", "zk3:2183"), "/kafka"),
    ("zk1,zk2/kafka/prod/", ("zk1:2181", "zk2:2181"), "/kafka/prod"),
    ("[::1]:2181/k", ("[::1]:2181",), "/k"),
    ("zk1:2181/", ("zk1:2181",), ""),
    (" zk1:2181 , zk2:2181 ", ("zk1:2181", "zk2:2181"), ""),
])
def test_good_connect_strings(connect: str, hosts: tuple[str, ...], chroot: str) -> None:
    parsed = parse_connect(connect)
    assert (parsed.hosts, parsed.chroot) == (hosts, chroot)
    assert parsed.kazoo_hosts == ",".join(hosts) + chroot


@pytest.mark.parametrize(("connect", "problem"), [
    ("", "empty"),
    ("zk1:abc", "is not host:port"),
    ("zk1:0", "outside 1..65535"),
    ("zk1:70000", "outside 1..65535"),
    ("zk1:2181,,zk2:2181", "is not host:port"),
    ("zk1:2181/a//b", "not a valid znode path"),
    ("zk1:2181/a/../b", "not a valid znode path"),
    ("zk 1:2181", "is not host:port"),
    ("/chroot-only", "is not host:port"),
])
def test_bad_connect_strings_name_the_flag(connect: str, problem: str) -> None:
    with pytest.raises(BadConnectStringError) as info:
        parse_connect(connect)
    assert f"--zookeeper {connect!r}" in str(info.value)
    assert problem in str(info.value)
    assert exit_code_for(info.value) == 2


def test_bad_digest_refused_before_connecting() -> None:
    with pytest.raises(BadConnectStringError, match="--zk-digest") as info:
        open_session(ConnectOptions("127.0.0.1:1", digest="no-colon-secret"))
    assert "no-colon-secret" not in str(info.value)


def test_connect_options_repr_hides_secrets() -> None:
    opts = ConnectOptions("zk:2181", digest="u:hunter2", sasl_password="pw-secret")
    assert "hunter2" not in repr(opts) and "pw-secret" not in repr(opts)


def test_connect_options_parse_the_connect_string_once_when_built() -> None:
    opts = ConnectOptions("zk1:2182,zk2/kafka")
    assert opts.parsed.hosts == ("zk1:2182", "zk2:2181")
    assert opts.parsed.chroot == "/kafka"
    with pytest.raises(BadConnectStringError, match="--zookeeper '127.0.0.1:notaport'"):
        ConnectOptions("127.0.0.1:notaport")


def test_session_expiry_is_exit_3_and_names_the_znode_without_promising_watches() -> None:
    # every command reads through this mapping; only the online mirror holds watches (and
    # prints its own line about them), so the error says what happened and what to do
    from kazoo.exceptions import SessionExpiredError

    from zkreader import ZkSessionExpiredError
    from zkreader._session import map_kazoo_error

    err = map_kazoo_error(SessionExpiredError(), "/brokers/topics/t1")
    assert isinstance(err, ZkSessionExpiredError)
    assert str(err) == "ZooKeeper session expired reading /brokers/topics/t1; re-run"
    assert exit_code_for(err) == 3
