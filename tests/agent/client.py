"""An MCP client over stdio, the SDK's own, on `python -m sgwatch mcp`; it keeps every
answer's text so that a test can weigh what an agent would have read."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client


@dataclass
class Answer:
    text: str
    error: bool

    @property
    def doc(self) -> dict[str, Any]:
        assert not self.error, self.text
        return json.loads(self.text)


@dataclass
class Agent:
    session: ClientSession
    texts: list[str] = field(default_factory=list)  # every answer, as the agent read it
    progress: list[tuple[float, str]] = field(default_factory=list)

    async def call(self, tool: str, **arguments: Any) -> Answer:
        async def told(value: float, total: float | None, message: str | None) -> None:
            self.progress.append((value, message or ""))

        result = await self.session.call_tool(tool, arguments, progress_callback=told)
        (content,) = result.content
        self.texts.append(content.text)
        return Answer(content.text, result.is_error)


@contextlib.asynccontextmanager
async def agent(
    env: dict[str, str], folder: Path, *flags: str, config_text: str = ""
) -> AsyncIterator[Agent]:
    """`sgwatch mcp FLAGS` with a config file in `folder` (empty unless `config_text`),
    and a client on it."""
    config = folder / "config.toml"
    config.write_text(config_text)
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "sgwatch", "mcp", "--config", str(config), *flags],
        env=env,
    )
    with (folder / "mcp-stderr.txt").open("w") as errors:
        async with stdio_client(params, errlog=errors) as (r, w), ClientSession(r, w) as s:
            await s.initialize()
            yield Agent(s)
