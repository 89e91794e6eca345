"""`bench`: the bench probe on a ready server, answered as tok/s per phase and the
roofline sentence (the one-request rate against the GPUs' bandwidth ceiling)."""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver.exceptions import ToolError

from sgwatch.agent.budget import clean
from sgwatch.agent.look import Reader, looking
from sgwatch.agent.status import roofline
from sgwatch.control.bench_probe import (
    BenchFailed,
    BenchResult,
    BenchSettings,
    load_prompts,
    prompts_from_texts,
    run_bench,
)
from sgwatch.live.session import Session
from sgwatch.transport.errors import TransportError

Doc = dict[str, Any]


async def bench(session: Session, concurrency: int, max_tokens: int) -> tuple[Doc, BenchResult]:
    """Bench the server `session` finds (ToolError, one line, when it cannot)."""
    from sgwatch.control.server_http import NotReady  # httpx loads with the first bench

    host = session.watch.label
    texts = session.profile.bench_prompts
    prompts = prompts_from_texts(texts) if texts else load_prompts()
    try:
        settings = BenchSettings(prompts, concurrency, max_tokens)
    except ValueError as e:
        raise ToolError(f"refused: {e}") from None
    async with looking(session):
        s = session.watch.state
        if not s.ready:
            raise ToolError(f"{host}: the server is {s.state}, not ready: wait for ready first")
        ctl = Reader(session)  # the bench is kept by the MCP server, for its status answers
        try:
            async with ctl.server_api() as api:
                result = await run_bench(api, settings)
        except (NotReady, BenchFailed, TransportError, OSError) as e:
            raise ToolError(clean(f"{host}: bench failed: {e}", 300)) from None
        roof, source = roofline(session, result)
    phases = [
        {
            "concurrency": p.concurrency,
            "tok_s_per_request": _round(p.decode_tok_s),
            "aggregate_tok_s": _round(p.aggregate_tok_s),
            "ttft_p50_ms": _ms(p.ttft_p50_s),
            "itl_p50_ms": _ms(p.itl_p50_s),
        }
        for p in result.phases
    ]
    doc: Doc = {
        "host": host,
        "pid": session.server.pid if session.server else None,
        "max_tokens": result.max_tokens,
        "phases": phases,
        "ceiling_tok_s": _round(roof.ceiling_tok_s),
        "share_of_ceiling_pct": _round(roof.percent),
        "roofline": roof.said(source),
    }
    return {k: v for k, v in doc.items() if v is not None}, result


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 1)


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds * 1000, 1)
