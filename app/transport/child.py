"""A local child process as asyncio makes one, plus what asyncio's lacks for ending one
whose output nobody reads any more.

asyncio's `Process.wait()` returns once the process has exited *and* its output pipes
have closed. A pipe whose reader stopped reading (its buffer full, so reading paused)
never sees its end: a wait on such a process never returns, and if the loop closes
meanwhile the pipe is collected after it (an unraisable "Event loop is closed").

    child = await spawn_shell(cmd, stdout=PIPE, stderr=PIPE, limit=1 << 20)
    await child.exited       # the process ended (what it wrote may still be unread)
    child.drop_output()      # close its output pipes: wait() then returns once it ended
"""

from __future__ import annotations

import asyncio
import asyncio.subprocess as aio
from typing import Any

DEFAULT_LIMIT = 1 << 16  # asyncio's own default buffer limit


class _Protocol(aio.SubprocessStreamProtocol):
    def __init__(self, limit: int, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(limit=limit, loop=loop)
        self.exited: asyncio.Future[None] = loop.create_future()

    def process_exited(self) -> None:
        super().process_exited()
        if not self.exited.done():
            self.exited.set_result(None)


class Child(aio.Process):
    def __init__(self, transport: asyncio.SubprocessTransport, protocol: _Protocol, loop) -> None:
        super().__init__(transport, protocol, loop)
        self.exited = protocol.exited
        self._pipes = transport

    def drop_output(self) -> None:
        """Close the output pipes: what is still unread is lost, a write after gets EPIPE."""
        for fd in (1, 2):
            pipe = self._pipes.get_pipe_transport(fd)
            if pipe is not None and not pipe.is_closing():
                pipe.close()


async def spawn_shell(cmd: str, limit: int = DEFAULT_LIMIT, **options: Any) -> Child:
    """As `asyncio.create_subprocess_shell(cmd, limit=limit, **options)`."""
    loop = asyncio.get_running_loop()
    transport, protocol = await loop.subprocess_shell(
        lambda: _Protocol(limit, loop), cmd, **options
    )
    return Child(transport, protocol, loop)
