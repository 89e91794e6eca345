"""The HTTP endpoints both simulated engines answer alike, over the shared scheduler.

Routing (404 for an unknown path, 405 for a known path with another method, 400
for a body the endpoint cannot read), health (503 until the server is ready, and
again while draining), and the OpenAI-compatible `/v1/chat/completions` and
`/v1/completions`, each streamed as server-sent events when asked. Generated
text is filler words, one per token. Each engine adds its own routes
(sglang/api.py, vllm/api.py).
"""

from __future__ import annotations

import abc
import json
import random
import time
from collections.abc import AsyncIterator, Callable

from sgwatch.sim.common.http import Handler, Request, Response, json_response
from sgwatch.sim.common.metrics import Metrics
from sgwatch.sim.common.process import ServerStatus
from sgwatch.sim.common.run import Run
from sgwatch.sim.common.scheduler import Request as Job
from sgwatch.sim.common.scheduler import Scheduler

_WORDS = ("the", "model", "answers", "with", "plain", "words", "while", "a", "simulated")
_WORDS += ("server", "counts", "tokens", "and", "reports", "its", "throughput", "in", "log")
NOT_FOUND = {"detail": "Not Found"}


class Api(abc.ABC):
    def __init__(
        self,
        args: Run,
        scheduler: Scheduler,
        metrics: Metrics,
        status: ServerStatus,
        on_generate: Callable[[], None],
    ) -> None:
        self.args, self.scheduler, self.metrics, self.status = args, scheduler, metrics, status
        self._on_generate = on_generate  # SGLang installs its SIGTERM handler here
        self._rng = random.Random(args.sim.seed + 2)
        self._routes = self.routes()

    @abc.abstractmethod
    def routes(self) -> dict[tuple[str, str], Handler]:
        """(method, path) -> the endpoint, as the engine serves them."""

    @abc.abstractmethod
    def _unavailable(self) -> Response:
        """The engine's answer to a request that comes while it shuts down."""

    async def handle(self, req: Request) -> Response:
        route = self._routes.get((req.method, req.path))
        if route is None:
            known = any(path == req.path for _, path in self._routes)
            if known:
                return json_response({"detail": "Method Not Allowed"}, 405)
            return json_response(NOT_FOUND, 404)
        try:
            return await route(req)
        except (ValueError, KeyError, TypeError) as e:
            return json_response({"object": "error", "message": str(e), "code": 400}, 400)

    async def health(self, req: Request) -> Response:
        ok = self.status.ready and not self.status.draining
        return Response(200 if ok else 503, b"")

    async def metrics_page(self, req: Request) -> Response:
        return Response(200, self.metrics.render().encode(), "text/plain; version=0.0.4")

    # -- OpenAI-compatible generation ---------------------------------------------------

    async def chat(self, req: Request) -> Response:
        body = req.json()
        messages = body["messages"]
        prompt = " ".join(str(m.get("content", "")) for m in messages)
        limit = body.get("max_completion_tokens") or body.get("max_tokens")
        job = self._submit(count(prompt) + 4 * len(messages), limit, prompt)
        if job is None:
            return self._unavailable()
        usage = bool((body.get("stream_options") or {}).get("include_usage"))
        if body.get("stream"):
            return sse(self._openai_events(job, "chat.completion.chunk", usage))
        text = await self._collect(job)
        choice = {
            "index": 0,
            "message": {"role": "assistant", "content": text},
            "logprobs": None,
            "finish_reason": job.finish_reason,
        }
        return json_response(self._openai(job, "chat.completion", [choice], usage=True))

    async def completions(self, req: Request) -> Response:
        body = req.json()
        prompt = body.get("prompt", "")
        job = self._submit(count(prompt), body.get("max_tokens") or 16, str(prompt))
        if job is None:
            return self._unavailable()
        usage = bool((body.get("stream_options") or {}).get("include_usage"))
        if body.get("stream"):
            return sse(self._openai_events(job, "text_completion", usage))
        text = await self._collect(job)
        choice = {"index": 0, "text": text, "logprobs": None, "finish_reason": job.finish_reason}
        return json_response(self._openai(job, "text_completion", [choice], usage=True))

    # -- helpers ------------------------------------------------------------------

    def _submit(self, prompt_tokens: int, limit: int | None, prompt: str) -> Job | None:
        if self.status.draining:
            return None
        self._on_generate()
        natural = None if limit is not None else self._rng.randint(60, 400)
        return self.scheduler.submit(prompt_tokens, limit or 4096, natural, hash(prompt))

    async def _tokens(self, job: Job) -> AsyncIterator[str]:
        """The job's text, a piece per scheduler step."""
        words = random.Random(job.rid)
        while (n := await job.stream.get()) is not None:
            yield "".join(" " + words.choice(_WORDS) for _ in range(n))

    async def _collect(self, job: Job) -> str:
        return "".join([piece async for piece in self._tokens(job)]).lstrip()

    async def _openai_events(self, job: Job, kind: str, usage: bool) -> AsyncIterator[dict]:
        chat = kind == "chat.completion.chunk"
        if chat:
            first = {"role": "assistant", "content": ""}
            yield self._openai(job, kind, [_choice(chat, first, None)])
        async for piece in self._tokens(job):
            yield self._openai(job, kind, [_choice(chat, {"content": piece}, None)])
        yield self._openai(job, kind, [_choice(chat, {}, job.finish_reason)])
        if usage:
            yield self._openai(job, kind, [], usage=True)

    def _openai(self, job: Job, kind: str, choices: list[dict], usage: bool = False) -> dict:
        doc: dict = {
            "id": job.rid,
            "object": kind,
            "created": int(time.time()),
            "model": self.args.served_model_name,
            "choices": choices,
        }
        if usage:
            doc["usage"] = {
                "prompt_tokens": job.prompt_tokens,
                "completion_tokens": job.generated,
                "total_tokens": job.prompt_tokens + job.generated,
            }
        return doc


def _choice(chat: bool, delta: dict, finish: str | None) -> dict:
    if chat:
        return {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
    return {"index": 0, "text": delta.get("content", ""), "logprobs": None, "finish_reason": finish}


def count(prompt: object) -> int:
    """Token count of a prompt: ids as given, else a token a word plus BOS."""
    if isinstance(prompt, list):
        return len(prompt)
    return len(str(prompt).split()) + 1


def sse(events: AsyncIterator[dict]) -> Response:
    """Server-sent events, ended by `data: [DONE]` as both engines end them."""

    async def body() -> AsyncIterator[bytes]:
        async for event in events:
            yield f"data: {json.dumps(event)}\n\n".encode()
        yield b"data: [DONE]\n\n"

    return Response(200, content_type="text/event-stream", stream=body())
