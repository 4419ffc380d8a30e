"""Toxiproxy (Shopify's TCP proxy for latency and faults) in front of ZooKeeper, for the fleet.

Remote latency is modelled outside our code: these machines' kernel has no `netem` qdisc, so
`tc` cannot delay loopback traffic, and our code never sleeps to fake a round trip. The server
is built once by `scripts/install-toxiproxy.sh` into
`${XDG_CACHE_HOME:-~/.cache}/zk2kraft/toxiproxy/<version>/` (outside the clone: a fresh clone
reuses it); `Toxiproxy` starts it on a free loopback port and drives its HTTP API (stdlib
`urllib`): one proxy a ZooKeeper, each with a latency toxic on both streams, so `latency_ms`
each way is twice that round trip (1 ms each way = 2 ms RTT).
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import urllib.request
from pathlib import Path

from tests.support.ports import free_ports
from tests.support.zk import wait_until

__all__ = ["TOXIPROXY_VERSION", "Toxiproxy", "toxiproxy_binary"]

TOXIPROXY_VERSION = os.environ.get("ZK2KRAFT_TOXIPROXY_VERSION", "v2.5.0")


def toxiproxy_binary() -> Path | None:
    """The cached server, or None when `scripts/install-toxiproxy.sh` has not built it."""
    # the place scripts/install-toxiproxy.sh builds it in (XDG's user cache, unset or empty
    # meaning ~/.cache, as the script's ${XDG_CACHE_HOME:-$HOME/.cache} reads it)
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    path = Path(cache) / "zk2kraft" / "toxiproxy" / TOXIPROXY_VERSION / "toxiproxy-server"
    return path if path.is_file() else None


class Toxiproxy:
    """A toxiproxy-server process and its proxies; `close()` stops it.

    Raises (start):
        RuntimeError: the binary is missing or the API does not answer (names the log).
    """

    def __init__(self) -> None:
        binary = toxiproxy_binary()
        if binary is None:
            raise RuntimeError("toxiproxy-server is not built: run scripts/install-toxiproxy.sh")
        (self.api_port,) = free_ports(1)
        self.workdir = Path(tempfile.mkdtemp(prefix="zk2kraft-toxiproxy-"))
        self._log = open(self.workdir / "toxiproxy.log", "wb")  # noqa: SIM115 - the child's
        self._proc = subprocess.Popen(
            [str(binary), "-host", "127.0.0.1", "-port", str(self.api_port)],
            stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        if not wait_until(self._answers, 30):
            self.close()
            raise RuntimeError(f"toxiproxy did not answer on {self.api_port} "
                               f"(log: {self.workdir / 'toxiproxy.log'})")

    def _call(self, method: str, path: str, body: object | None = None) -> object:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(f"http://127.0.0.1:{self.api_port}{path}", data=data,
                                         method=method,
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=10) as response:
            text = response.read()
        return json.loads(text) if text else None

    def _answers(self) -> bool:
        if self._proc.poll() is not None:
            return True  # exited: the caller's check of the API then fails with the log
        try:
            self._call("GET", "/proxies")
        except OSError:
            return False
        return True

    def proxy(self, name: str, upstream: str, *, latency_ms: int) -> str:
        """Put a proxy in front of `upstream` (`host:port`) delaying each direction by
        `latency_ms`; returns the `host:port` to connect to instead."""
        (port,) = free_ports(1)
        listen = f"127.0.0.1:{port}"
        self._call("POST", "/proxies", {"name": name, "listen": listen, "upstream": upstream,
                                        "enabled": True})
        for stream in ("upstream", "downstream"):
            self._call("POST", f"/proxies/{name}/toxics",
                       {"name": f"latency_{stream}", "type": "latency", "stream": stream,
                        "toxicity": 1.0, "attributes": {"latency": latency_ms, "jitter": 0}})
        return listen

    def set_latency(self, name: str, latency_ms: int) -> None:
        """Change a proxy's latency, each way."""
        for stream in ("upstream", "downstream"):
            self._call("POST", f"/proxies/{name}/toxics/latency_{stream}",
                       {"attributes": {"latency": latency_ms, "jitter": 0}})

    def close(self) -> None:
        """Stop the server (its proxies go with it)."""
        if self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait(timeout=10)
        self._log.close()

    def __enter__(self) -> Toxiproxy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
