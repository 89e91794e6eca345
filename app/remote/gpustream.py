"""GPU samples from one long-lived `nvidia-smi --query-gpu=... -lms N` per connection.

One process for the whole session, not one per sample: nvidia-smi's start-up
(driver init) is what makes `watch -n1 nvidia-smi` expensive on the host.

    async for ev in GpuStream(link).events():
        GpuData        (ev.data: CSV rows, no header, no units, fields as `fields`:
                        feed them to Watch.feed_gpu / GpuHistory)
        GpuUnavailable (no nvidia-smi, or it stopped: show ev.message in the panel; the
                        last event; ev.retry: whether running it again may help)
        LinkDown / LinkUp
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

from sgwatch.core.gpu_history import QUERY
from sgwatch.transport.base import Stream
from sgwatch.transport.link import Link, LinkDown, LinkUp

NOT_FOUND = 127


@dataclass(frozen=True, slots=True)
class GpuData:
    data: bytes


@dataclass(frozen=True, slots=True)
class GpuUnavailable:
    message: str
    retry: bool = False  # it ran and stopped (killed, a driver reset): worth starting again


GpuEvent = GpuData | GpuUnavailable | LinkDown | LinkUp


def gpu_command(interval_ms: int, fields: list[str]) -> str:
    return (
        f"command -v nvidia-smi >/dev/null 2>&1 || exit {NOT_FOUND}\n"
        f"nvidia-smi --query-gpu={','.join(fields)} --format=csv,noheader,nounits "
        f"-lms {int(interval_ms)}"
    )


class GpuStream:
    def __init__(self, link: Link, interval_ms: int = 500, fields: list[str] = QUERY) -> None:
        self.link = link
        self.interval_ms = interval_ms
        self.fields = fields

    def events(self) -> AsyncIterator[GpuEvent]:
        """Use with `contextlib.aclosing` (or run to the end) so the remote side stops."""
        return self.link.follow(lambda: gpu_command(self.interval_ms, self.fields), self._decode)

    async def _decode(self, stream: Stream) -> AsyncIterator[GpuEvent]:
        tail = b""  # nvidia-smi prints its own errors on stdout
        async for chunk in stream:
            tail = (tail + chunk)[-400:]
            yield GpuData(chunk)
        if stream.exit_status == NOT_FOUND:
            yield GpuUnavailable("no nvidia-smi on this host: no GPU data")
            return
        said = stream.stderr or tail.decode("utf-8", "replace").strip()
        why = next((line for line in reversed(said.splitlines()) if not _sample(line)), "")
        yield GpuUnavailable(
            f"nvidia-smi stopped (exit status {stream.exit_status}) {why}".strip(), retry=True
        )


def _sample(line: str) -> bool:
    """A row of samples (a GPU's index first, no error in a field: nvidia-smi writes
    `[GPU is lost]` or `[Unknown Error]` where a value should be), not why it stopped."""
    return line.split(",")[0].strip().isdigit() and "[" not in line.replace("[N/A]", "")
