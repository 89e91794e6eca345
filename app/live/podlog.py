"""A pod container's log as a source: `kubectl logs --timestamps`, every line once, in
order, across drops.

    async with contextlib.aclosing(PodLog(kube, "vllm-7d9c-x2x", "vllm").events()) as events:
        async for ev in events:
            LogOpened, LogData   as a file's follower gives them: the history first (what the
                                 container wrote before we came, its size bounding the backlog)
            LinkDown / LinkUp    kubectl failed (the API server, the kubelet): shown stale, retried
            ContainerEnded       the stream ended because the container did (the last event)

History is one `kubectl logs --timestamps POD -c C`; following is `kubectl logs -f
--timestamps --since-time=LAST` from the last line's time. The API server keeps
sinceTime to the second, so a resume repeats the lines of that second: a line older
than the last one kept, or as old and among the ones already kept at that time, is
dropped (docs/design/kubernetes.md, resuming). kubectl's stamp is taken off each line:
the engine's own prefix is what the parser reads.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass

from sgwatch.remote.logfollow import LogData, LogOpened
from sgwatch.transport.kube import Kubectl, KubeError, failure
from sgwatch.transport.link import LinkDown, LinkUp

RETRY_S = (0.5, 1.0, 2.0, 5.0)  # waits between attempts after a failure, the last repeated


@dataclass(frozen=True, slots=True)
class ContainerEnded:
    """`kubectl logs -f` ended by itself: the container it followed is gone."""


def stamp_of(text: bytes) -> tuple[str, int]:
    """(whole seconds as text, nanoseconds) of an RFC3339Nano stamp: order by the pair."""
    base, _, frac = text.decode("ascii", "replace").rstrip("Z").partition(".")
    return base, int((frac or "0").ljust(9, "0")[:9])


class PodLog:
    def __init__(self, kube: Kubectl, pod: str, container: str) -> None:
        self.kube, self.pod, self.container = kube, pod, container
        self.offset = 0  # bytes delivered
        self._last: tuple[str, int] | None = None  # the last line's time
        self._at_last = 0  # lines delivered with exactly that time
        self._skip = 0  # of those, how many a resumed stream has yet to repeat

    async def previous(self) -> bytes:
        """The log of the container before this one (the kubelet restarted it)."""
        args = ["logs", "--timestamps", "--previous", self.pod, "-c", self.container]
        out = await self.kube.check(*args, timeout=120)
        return b"".join(line.partition(b" ")[2] for line in out.encode().splitlines(True))

    async def events(self) -> AsyncIterator[object]:
        out = await self.kube.check("logs", "--timestamps", self.pod, "-c", self.container)
        past = self._kept(out.encode().split(b"\n"))
        self.offset = len(past)
        yield LogOpened("start", 0, len(past))
        if past:
            yield LogData(past, self.offset)
        failures = 0
        while True:
            try:
                # Closed with this one: else a consumer that stops early leaves the
                # kubectl stream to the collector, maybe after the loop has closed.
                async with contextlib.aclosing(self._follow()) as chunks:
                    async for data in chunks:
                        if failures:
                            failures = 0
                            yield LinkUp()
                        self.offset += len(data)
                        yield LogData(data, self.offset)
                yield ContainerEnded()
                return
            except KubeError as e:
                yield LinkDown(str(e))
                await asyncio.sleep(RETRY_S[min(failures, len(RETRY_S) - 1)])
                failures += 1

    async def _follow(self) -> AsyncIterator[bytes]:
        since = [] if self._last is None else [f"--since-time={self._last[0]}Z"]
        args = ["logs", "-f", "--timestamps", *since, self.pod, "-c", self.container]
        self._skip = self._at_last  # the lines of the last second delivered already
        stream = await self.kube.stream(*args)
        pending = b""
        try:
            while data := await stream.read():
                *lines, pending = (pending + data).split(b"\n")
                if kept := self._kept(lines):
                    yield kept
        finally:
            await stream.close()
        if stream.exit_status != 0:
            raise failure(self.kube.label, stream.exit_status, stream.stderr)
        if kept := self._kept([pending]):
            yield kept

    def _kept(self, lines: list[bytes]) -> bytes:
        """The text of the lines not delivered before, each with its newline."""
        out = bytearray()
        for line in lines:
            stamp, _, text = line.partition(b" ")
            if not stamp:
                continue
            t = stamp_of(stamp)
            if self._last is not None and t <= self._last:
                if t < self._last or self._skip > 0:
                    self._skip -= t == self._last
                    continue
                self._at_last += 1
            else:
                self._last, self._at_last, self._skip = t, 1, 0
            out += text + b"\n"
        return bytes(out)
