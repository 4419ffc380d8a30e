"""kazoo's log records lose their znode payloads; the message, ids and paths stay (I7)."""

from __future__ import annotations

import io
import logging
from collections import namedtuple

from zkreader import PayloadRedactingFilter

GetData = namedtuple("GetData", ["path", "watcher"])
SetData = namedtuple("SetData", ["path", "data", "version"])
SECRET = b'{"SCRAM-SHA-256":"salt=c2FsdHNhbHQ=,stored_key=U1RPUkVE,iterations=4096"}'


def _emit(name: str, level: int, msg: str, *args: object) -> str:
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(logging.Formatter("%(name)s %(message)s"))
    handler.addFilter(PayloadRedactingFilter())
    logger = logging.getLogger(name)
    logger.propagate = False
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        logger.log(level, msg, *args)
    finally:
        logger.removeHandler(handler)
        logger.propagate = True
    return out.getvalue()


def test_response_bytes_and_request_data_are_replaced() -> None:
    text = _emit("kazoo.client", logging.DEBUG, "Received response(xid=%s): %r", 7,
                 (SECRET, object()))
    assert text == "kazoo.client Received response(xid=7): '<tuple of 2 item(s) redacted>'\n"
    text = _emit("kazoo.client", logging.DEBUG, "Sending request(xid=%s): %s", 8,
                 SetData("/config/users/alice", SECRET, -1))
    assert text == ("kazoo.client Sending request(xid=8): SetData(path='/config/users/alice', "
                    "...redacted)\n")
    text = _emit("kazoo.client", logging.DEBUG, "Read %s", SECRET)
    assert text == f"kazoo.client Read <{len(SECRET)} bytes redacted>\n"


def test_hosts_states_and_errors_stay_readable() -> None:
    text = _emit("kazoo.client", logging.WARNING, "Connection dropped: %s", OSError("reset"))
    assert text == "kazoo.client Connection dropped: OSError\n"
    text = _emit("kazoo.client", logging.INFO, "Zookeeper connection established, state: %s",
                 "CONNECTED")
    assert text == "kazoo.client Zookeeper connection established, state: CONNECTED\n"
    text = _emit("kazoo.client", logging.DEBUG, "get %s", GetData("/brokers/ids/1", None))
    assert text == "kazoo.client get GetData(path='/brokers/ids/1', ...redacted)\n"


def test_our_records_are_untouched_and_py4j_debug_is_dropped() -> None:
    assert _emit("zkreader._reader", logging.INFO, "read %d znodes", 12) == (
        "zkreader._reader read 12 znodes\n")
    assert _emit("py4j.clientserver", logging.DEBUG, "Command to send: %s", "c\nsecret") == ""
    assert _emit("py4j.clientserver", logging.WARNING, "lost %s", "x") == (
        "py4j.clientserver lost x\n")
