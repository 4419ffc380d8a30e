"""The stand-in's asyncio loop, on a thread of its own, and what runs on it.

`ServerLoop` owns the event loop and its thread, the listener, the tasks started on the loop
(BeginQuorumEpoch rounds, broker fencing) and the open connections, so that closing stops all of
them; and `changed`, the future every long-polling Fetch waits on, replaced by `notify`. The
caller's thread reaches the loop through `call`.
"""

from __future__ import annotations

import asyncio
import ssl
import threading
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

__all__ = ["ServerLoop"]

_T = TypeVar("_T")


class ServerLoop:
    """An event loop run on a daemon thread named `thread_name` (started by the first `call`)."""

    def __init__(self, thread_name: str) -> None:
        self.loop = asyncio.new_event_loop()
        self.changed: asyncio.Future[None] = self.loop.create_future()
        self._server: asyncio.Server | None = None
        self._thread = threading.Thread(target=self.loop.run_forever, name=thread_name,
                                        daemon=True)
        self.tasks: list[asyncio.Task[Any]] = []
        self.conns: set[asyncio.StreamWriter] = set()

    def call(self, coro: Coroutine[Any, Any, _T], timeout: float) -> _T:
        """Run `coro` on the loop and wait for its result (from the caller's thread)."""
        if not self._thread.is_alive():
            self._thread.start()
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    async def listen(self, serve: Callable[[asyncio.StreamReader, asyncio.StreamWriter],
                                           Awaitable[None]],
                     host: str, port: int, tls: ssl.SSLContext | None) -> None:
        """Start the listener (on the loop).

        Raises:
            OSError: the address cannot be listened on.
        """
        self._server = await asyncio.start_server(serve, host, port, ssl=tls)

    def spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        """Run `coro` on the loop until it ends or `stop` cancels it (called on the loop)."""
        self.tasks.append(self.loop.create_task(coro))

    def notify(self) -> None:
        """Wake every long-polling Fetch (called on the loop)."""
        fut, self.changed = self.changed, self.loop.create_future()
        fut.set_result(None)

    def stop(self) -> None:
        """Cancel the tasks, close the listener and the connections, end the thread."""
        async def stop() -> None:
            for t in self.tasks:
                t.cancel()
            if self._server is not None:
                self._server.close()
            for w in list(self.conns):
                w.close()
            current = asyncio.current_task()
            others = [t for t in asyncio.all_tasks() if t is not current]
            for t in others:
                t.cancel()
            await asyncio.gather(*others, return_exceptions=True)

        if self._thread.is_alive():
            try:
                self.call(stop(), 10.0)
            finally:
                self.loop.call_soon_threadsafe(self.loop.stop)
                self._thread.join(10)
