"""The bench probe: a few streamed requests at concurrency 1 and N, timed as tokens arrive.

    async with open_server(transport, port) as api:
        result = await run_bench(api, BenchSettings(load_prompts(), concurrency=4), progress)

Each request is one user message to the OpenAI-compatible `/v1/chat/completions`
with `"stream": true`, greedy, a fixed `max_tokens` and `ignore_eos` (SGLang's
extension), so every request decodes the same length whatever the model would
say. It refuses to start unless `/health` answers 200 (SGLang: warmup done).
Cancelling the task closes every open stream; SGLang aborts a request whose
client went away.

Times are taken here, as chunks arrive through the tunnel. The link's latency
adds to TTFT but not to decode rates (a constant delay moves the first and last
token alike). A chunk may hold several tokens (speculative decoding, stream
batching): token counts come from the usage SGLang sends with each chunk when
asked (`continuous_usage_stats`), else from the final usage spread evenly over
the chunks. Inter-token latency is a chunk's gap divided by its tokens.
"""

from __future__ import annotations

import asyncio
import json
import time
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from importlib.resources import files
from pathlib import Path
from statistics import fmean
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # httpx loads only when a bench runs, not with the command line
    from sgwatch.control.server_http import ServerApi

CHAT = "/v1/chat/completions"
DEFAULT_CONCURRENCY = 4
DEFAULT_MAX_TOKENS = 256


class BenchFailed(Exception):
    """A request was refused or broke off: `str(e)` is the line to show."""


class PromptsError(ValueError):
    """A prompts file that cannot be used: names the file and the problem."""


@dataclass(frozen=True, slots=True)
class Prompt:
    name: str
    text: str


@dataclass(frozen=True, slots=True)
class BenchSettings:
    prompts: Sequence[Prompt]
    concurrency: int = DEFAULT_CONCURRENCY  # the second phase's; the first runs one at a time
    max_tokens: int = DEFAULT_MAX_TOKENS

    def __post_init__(self) -> None:
        if not self.prompts:
            raise ValueError("the bench needs at least one prompt")
        if self.concurrency < 1 or self.max_tokens < 1:
            raise ValueError("concurrency and max_tokens must be at least 1")

    @property
    def phases(self) -> tuple[int, ...]:
        return (1,) if self.concurrency == 1 else (1, self.concurrency)

    def requests(self, concurrency: int) -> list[Prompt]:
        """A phase's requests: every prompt once, and at least one per slot."""
        n = max(concurrency, len(self.prompts))
        return [self.prompts[i % len(self.prompts)] for i in range(n)]


@dataclass(frozen=True, slots=True)
class BenchProgress:
    done: int  # requests finished, over the whole bench
    total: int
    concurrency: int  # of the phase now running


@dataclass(frozen=True, slots=True)
class RequestResult:
    prompt: str  # the prompt's name
    prompt_tokens: int | None  # as the server counted them
    output_tokens: int
    ttft_s: float  # request sent -> first token here
    decode_tok_s: float | None  # tokens after the first / time from first to last
    itl_p50_s: float | None
    itl_p95_s: float | None
    seconds: float  # sent -> last byte


@dataclass(frozen=True, slots=True)
class PhaseResult:
    concurrency: int
    requests: list[RequestResult]
    seconds: float  # first request sent -> last one finished
    output_tokens: int
    aggregate_tok_s: float  # output tokens of all requests / seconds
    decode_tok_s: float | None  # mean over the requests
    ttft_p50_s: float | None
    ttft_p95_s: float | None
    itl_p50_s: float | None  # over every token gap of the phase
    itl_p95_s: float | None


@dataclass(frozen=True, slots=True)
class BenchResult:
    target: str  # "host:port"
    model: str | None
    max_tokens: int
    phases: list[PhaseResult]
    accept_length: float | None  # speculative decoding only, as the server reports it

    def to_dict(self) -> dict:
        return asdict(self)


# -- prompts ---------------------------------------------------------------------


def load_prompts(path: Path | None = None) -> list[Prompt]:
    """Prompts from a TOML file of `[[prompt]]` tables (`name`, `text`); the bundled set
    when no path is given."""
    where = str(path) if path else "the bundled prompts"
    try:
        text = path.read_text(encoding="utf-8") if path else _bundled()
        doc = tomllib.loads(text)
    except OSError as e:
        raise PromptsError(f"{where}: cannot read: {e.strerror or e}") from None
    except tomllib.TOMLDecodeError as e:
        raise PromptsError(f"{where}: not valid TOML: {e}") from None
    entries = doc.get("prompt")
    if not isinstance(entries, list) or not entries:
        raise PromptsError(f'{where}: no [[prompt]] tables (each with text = "...")')
    out = []
    for i, entry in enumerate(entries, 1):
        body = entry.get("text") if isinstance(entry, dict) else None
        if not isinstance(body, str) or not body.strip():
            raise PromptsError(f"{where}: prompt {i} has no text")
        out.append(Prompt(str(entry.get("name") or f"prompt-{i}"), body))
    return out


def prompts_from_texts(texts: Sequence[str]) -> list[Prompt]:
    """A host profile's `bench_prompts` (plain strings)."""
    return [Prompt(f"prompt-{i}", t) for i, t in enumerate(texts, 1)]


def _bundled() -> str:
    return files("sgwatch.control").joinpath("prompts.toml").read_text(encoding="utf-8")


# -- running ---------------------------------------------------------------------


async def run_bench(
    api: ServerApi,
    settings: BenchSettings,
    progress: Callable[[BenchProgress], None] | None = None,
) -> BenchResult:
    """Every phase in turn. Raises NotReady before sending anything to a server that
    is not ready, BenchFailed when a request fails or the server stops answering."""
    import httpx  # here: the command line imports this module for its defaults alone

    await api.ensure_ready()
    try:
        return await _phases(api, settings, progress)
    except httpx.HTTPError as e:
        why = str(e) or type(e).__name__
        raise BenchFailed(f"{api.label}: the server stopped answering: {why}") from None


async def _phases(
    api: ServerApi, settings: BenchSettings, progress: Callable[[BenchProgress], None] | None
) -> BenchResult:
    model = await api.model_id()
    total = sum(len(settings.requests(c)) for c in settings.phases)
    done = 0

    def tick(concurrency: int) -> None:
        nonlocal done
        done += 1
        if progress:
            progress(BenchProgress(done, total, concurrency))

    phases = []
    for concurrency in settings.phases:
        if progress:
            progress(BenchProgress(done, total, concurrency))
        phases.append(await _phase(api, model, settings, concurrency, tick))
    return BenchResult(
        target=api.label,
        model=model,
        max_tokens=settings.max_tokens,
        phases=phases,
        accept_length=_accept_length(await api.server_info()),
    )


async def _phase(
    api: ServerApi,
    model: str | None,
    settings: BenchSettings,
    concurrency: int,
    tick: Callable[[int], None],
) -> PhaseResult:
    prompts = settings.requests(concurrency)
    slots = asyncio.Semaphore(concurrency)
    results: list[tuple[RequestResult, list[float]] | None] = [None] * len(prompts)

    async def one(i: int, prompt: Prompt) -> None:
        async with slots:
            results[i] = await _request(api, model, prompt, settings.max_tokens)
        tick(concurrency)

    start = time.perf_counter()
    try:
        async with asyncio.TaskGroup() as tg:
            for i, prompt in enumerate(prompts):
                tg.create_task(one(i, prompt))
    except ExceptionGroup as group:  # the first failure; the others were cancelled with it
        raise group.exceptions[0] from None
    seconds = time.perf_counter() - start
    done = [r for r in results if r is not None]
    requests = [r for r, _ in done]
    gaps = [g for _, gs in done for g in gs]
    output = sum(r.output_tokens for r in requests)
    rates = [r.decode_tok_s for r in requests if r.decode_tok_s is not None]
    ttfts = [r.ttft_s for r in requests]
    return PhaseResult(
        concurrency=concurrency,
        requests=requests,
        seconds=seconds,
        output_tokens=output,
        aggregate_tok_s=output / seconds,
        decode_tok_s=fmean(rates) if rates else None,
        ttft_p50_s=percentile(ttfts, 0.5),
        ttft_p95_s=percentile(ttfts, 0.95),
        itl_p50_s=percentile(gaps, 0.5),
        itl_p95_s=percentile(gaps, 0.95),
    )


async def _request(
    api: ServerApi, model: str | None, prompt: Prompt, max_tokens: int
) -> tuple[RequestResult, list[float]]:
    """One streamed request: its result and its per-token gaps (seconds)."""
    body = {
        "model": model or "default",
        "messages": [{"role": "user", "content": prompt.text}],
        "max_tokens": max_tokens,
        "temperature": 0,
        "ignore_eos": True,
        "stream": True,
        "stream_options": {"include_usage": True, "continuous_usage_stats": True},
    }
    arrivals: list[tuple[float, int | None]] = []  # (when, completion tokens so far if told)
    usage: dict = {}
    sent = time.perf_counter()
    async with api.client.stream("POST", CHAT, json=body) as r:
        if r.status_code != 200:
            detail = (await r.aread()).decode("utf-8", "replace").strip()[:200]
            raise BenchFailed(f"{api.label}: {CHAT} answered HTTP {r.status_code}: {detail}")
        async for line in r.aiter_lines():
            if not line.startswith("data:"):
                continue
            data = line[5:].strip()
            if data == "[DONE]":
                break
            doc = json.loads(data)
            if doc.get("object") == "error" or "error" in doc:
                raise BenchFailed(f"{api.label}: the server broke off a request: {data[:200]}")
            chunk_usage = doc.get("usage") or {}
            usage = chunk_usage or usage
            if any((c.get("delta") or {}).get("content") for c in doc.get("choices") or ()):
                arrivals.append((time.perf_counter(), chunk_usage.get("completion_tokens")))
    finished = time.perf_counter()
    if not arrivals:
        raise BenchFailed(f"{api.label}: a request finished without any tokens")
    output = int(usage.get("completion_tokens") or len(arrivals))
    tokens = _tokens_per_chunk(arrivals, output)
    times = [t for t, _ in arrivals]
    gaps = [(b - a) / n for a, b, n in zip(times, times[1:], tokens[1:], strict=False) if n > 0]
    span = times[-1] - times[0]
    result = RequestResult(
        prompt=prompt.name,
        prompt_tokens=usage.get("prompt_tokens"),
        output_tokens=output,
        ttft_s=times[0] - sent,
        decode_tok_s=(output - tokens[0]) / span if span > 0 else None,
        itl_p50_s=percentile(gaps, 0.5),
        itl_p95_s=percentile(gaps, 0.95),
        seconds=finished - sent,
    )
    return result, gaps


def _tokens_per_chunk(arrivals: list[tuple[float, int | None]], output: int) -> list[float]:
    counts = [c for _, c in arrivals]
    if all(c is not None for c in counts):
        return [float(b - a) for a, b in zip([0, *counts], counts, strict=False)]
    return [output / len(arrivals)] * len(arrivals)


def _accept_length(info: dict) -> float | None:
    """The mean accept length over the server's ranks; absent without speculative decoding."""
    states = info.get("internal_states") or []
    values = [
        s["avg_spec_accept_length"]
        for s in states
        if isinstance(s, dict) and isinstance(s.get("avg_spec_accept_length"), int | float)
    ]
    return fmean(values) if values else None


def percentile(values: Sequence[float], q: float) -> float | None:
    """The q-quantile, interpolated between the two nearest samples."""
    if not values:
        return None
    s = sorted(values)
    pos = q * (len(s) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)
