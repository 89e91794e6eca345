"""A TCP proxy on 127.0.0.1 between sgwatch and the test sshd that breaks the link on
demand: reset it (RST, as a crashed middlebox or a rebooted NAT does), black-hole it
(packets silently dropped, no RST: a half-open link only keepalive can notice),
delay it, or cut it after a number of bytes either way (a drop at a chosen point).

It runs its own event loop in a thread, so in-process tests and sgwatch commands run
as subprocesses go through it alike.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
import threading
import time
from concurrent.futures import Future


class Pipe:
    """One client connection and its upstream to sshd."""

    def __init__(self, client: asyncio.StreamWriter, upstream: asyncio.StreamWriter) -> None:
        self.client, self.upstream = client, upstream
        self.black_holed = False
        self.down_bytes = 0  # sshd -> client bytes forwarded
        self.up_bytes = 0  # client -> sshd bytes forwarded

    def reset(self) -> None:
        """Close both sides with RST (SO_LINGER 0), not a FIN."""
        for w in (self.client, self.upstream):
            sock = w.get_extra_info("socket")
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            w.transport.abort()


class FaultProxy:
    def __init__(self, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self.port = 0
        self.pipes: list[Pipe] = []
        self.accepted = 0  # connections made through the proxy
        self.last: Pipe | None = None  # the latest of them
        self.delay = 0.0  # seconds added to every chunk, both ways
        self.black_hole = False  # new and current connections forward nothing
        self.cut_after: int | None = None  # reset a connection after this many bytes down
        self.cut_up_after: int | None = None  # ... or after this many bytes up
        self._loop = asyncio.new_event_loop()
        self._server: asyncio.Server | None = None
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)

    def start(self) -> FaultProxy:
        self._thread.start()
        self._server = self._call(
            asyncio.start_server(self._accept, "127.0.0.1", 0, reuse_address=True)
        )
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    def stop(self) -> None:
        self.reset()
        self._call(self._close_server())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)

    # -- faults, callable from any thread

    def reset(self) -> int:
        """Drop every current connection with RST; returns how many there were."""
        return self._call(self._reset())

    def black_hole_now(self) -> None:
        """From now on forward nothing, on current connections and new ones, until heal()."""
        self._loop.call_soon_threadsafe(self._set_black_hole, True)

    def heal(self) -> None:
        """End the black hole: the held connections are reset (their peers gave up on
        them, as after a real outage) and new ones forward again."""
        self._loop.call_soon_threadsafe(self._set_black_hole, False)
        self.reset()

    def connections(self) -> int:
        return len(self.pipes)

    def wait_connections(self, n: int, timeout: float = 30.0) -> bool:
        deadline = time.monotonic() + timeout
        while self.connections() < n:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.01)
        return True

    # -- the loop's side

    def _call(self, coro):
        fut: Future = asyncio.run_coroutine_threadsafe(coro, self._loop)
        return fut.result(10)

    async def _close_server(self) -> None:
        if self._server is not None:
            self._server.close()

    def _set_black_hole(self, on: bool) -> None:
        self.black_hole = on
        for p in self.pipes:
            p.black_holed = on

    async def _reset(self) -> int:
        pipes, self.pipes = self.pipes, []
        for p in pipes:
            p.reset()
        return len(pipes)

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.upstream_port)
        except OSError:
            writer.transport.abort()
            return
        self.accepted += 1
        pipe = Pipe(writer, up_writer)
        pipe.black_holed = self.black_hole
        self.pipes.append(pipe)
        self.last = pipe
        try:
            await asyncio.gather(
                self._pump(reader, up_writer, pipe, down=False),
                self._pump(up_reader, writer, pipe, down=True),
            )
        finally:
            if pipe in self.pipes:
                self.pipes.remove(pipe)
                for w in (writer, up_writer):
                    w.close()

    async def _pump(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, pipe: Pipe, down: bool
    ) -> None:
        with contextlib.suppress(OSError, asyncio.CancelledError):
            while data := await reader.read(65536):
                if pipe.black_holed:
                    continue  # swallowed: the sender never hears of it
                if self.delay:
                    await asyncio.sleep(self.delay)
                if down:
                    pipe.down_bytes += len(data)
                    sent, cut = pipe.down_bytes, self.cut_after
                else:
                    pipe.up_bytes += len(data)
                    sent, cut = pipe.up_bytes, self.cut_up_after
                if cut is not None and sent > cut:
                    writer.write(data[: len(data) - (sent - cut)])
                    if pipe in self.pipes:
                        self.pipes.remove(pipe)
                    pipe.reset()
                    return
                writer.write(data)
                await writer.drain()
            if pipe in self.pipes and not pipe.black_holed:
                writer.write_eof() if writer.can_write_eof() else writer.close()
