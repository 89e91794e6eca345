"""SGLang's HTTP endpoints, answered by the simulated scheduler.

Health (503 until the warmup request succeeded, and again while draining),
model and server info, `/metrics` (only with `--enable-metrics`), and the
generation endpoints: SGLang's native `/generate` and the OpenAI-compatible
`/v1/chat/completions` and `/v1/completions`, each streamed as server-sent
events when asked. Generated text is filler words, one per token.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

from sgwatch.sim.args import ServerArgs
from sgwatch.sim.http import Request, Response, json_response
from sgwatch.sim.logfmt import DEPRECATED_ENDPOINTS, Format05
from sgwatch.sim.metrics_page import Metrics
from sgwatch.sim.scheduler import Request as Job
from sgwatch.sim.scheduler import Scheduler
from sgwatch.sim.writer import WARNING, LogWriter

VERSIONS = {"0.4": "0.4.6.post5", "0.5": "0.5.6", "0.5.23": "0.5.23"}
_WORDS = ("the", "model", "answers", "with", "plain", "words", "while", "a", "simulated")
_WORDS += ("server", "counts", "tokens", "and", "reports", "its", "throughput", "in", "log")
_NOT_FOUND = {"detail": "Not Found"}


@dataclass(slots=True)
class ServerStatus:
    ready: bool = False  # the warmup request succeeded
    draining: bool = False  # SIGTERM received
    started_at: float = 0.0  # wall clock


class Api:
    def __init__(
        self,
        args: ServerArgs,
        fmt: Format05,
        out: LogWriter,
        scheduler: Scheduler,
        metrics: Metrics,
        status: ServerStatus,
        on_generate: Callable[[], None],
    ) -> None:
        self.args, self.fmt, self.out = args, fmt, out
        self.scheduler, self.metrics, self.status = scheduler, metrics, status
        self._on_generate = on_generate  # SGLang installs its SIGTERM handler here
        self._rng = random.Random(args.sim.seed + 2)
        self._routes = {
            ("GET", "/health"): self.health,
            ("GET", "/health_generate"): self.health,
            ("GET", "/v1/models"): self.models,
            ("GET", "/model_info"): self.model_info,
            ("GET", "/get_model_info"): self.model_info,
            ("GET", "/server_info"): self.server_info,
            ("GET", "/get_server_info"): self.server_info,
            ("GET", "/metrics"): self.metrics_page,
            ("POST", "/generate"): self.generate,
            ("POST", "/v1/chat/completions"): self.chat,
            ("POST", "/v1/completions"): self.completions,
        }

    async def handle(self, req: Request) -> Response:
        route = self._routes.get((req.method, req.path))
        if route is None:
            known = any(path == req.path for _, path in self._routes)
            if known:
                return json_response({"detail": "Method Not Allowed"}, 405)
            return json_response(_NOT_FOUND, 404)
        if req.path in DEPRECATED_ENDPOINTS and (note := self.fmt.deprecated_endpoint(req.path)):
            self.out.log(note, level=WARNING)
        try:
            return await route(req)
        except (ValueError, KeyError, TypeError) as e:
            return json_response({"object": "error", "message": str(e), "code": 400}, 400)

    # -- info -------------------------------------------------------------------

    async def health(self, req: Request) -> Response:
        ok = self.status.ready and not self.status.draining
        return Response(200 if ok else 503, b"")

    async def models(self, req: Request) -> Response:
        a = self.args
        model = {
            "id": a.served_model_name,
            "object": "model",
            "created": int(self.status.started_at),
            "owned_by": "sglang",
            "root": a.model_path,
            "max_model_len": a.context_length,
        }
        return json_response({"object": "list", "data": [model]})

    async def model_info(self, req: Request) -> Response:
        a = self.args
        return json_response(
            {
                "model_path": a.model_path,
                "tokenizer_path": a.dump.get("tokenizer_path"),
                "is_generation": True,
                "preferred_sampling_params": None,
                "weight_version": "default",
                "has_image_understanding": a.model.multimodal,
                "has_audio_understanding": False,
                "architectures": [a.model.arch],
            }
        )

    async def server_info(self, req: Request) -> Response:
        a = self.args
        state = {
            "last_gen_throughput": self.metrics.gen_throughput,
            "avg_spec_accept_length": self.metrics.accept_length,
        }
        return json_response(
            {
                **a.dump,
                "launch_command": a.launch_command,
                "startup_time": self.status.started_at,
                "version": VERSIONS[a.sim.format],
                "internal_states": [state],
            }
        )

    async def metrics_page(self, req: Request) -> Response:
        if not self.args.enable_metrics:
            return json_response(_NOT_FOUND, 404)
        return Response(200, self.metrics.render().encode(), "text/plain; version=0.0.4")

    # -- generation ---------------------------------------------------------------

    async def generate(self, req: Request) -> Response:
        body = req.json()
        params = body.get("sampling_params") or {}
        prompt = body.get("text") or body.get("input_ids") or ""
        job = self._submit(_count(prompt), int(params.get("max_new_tokens", 128)), str(prompt))
        if job is None:
            return self._unavailable()
        if body.get("stream"):
            return _sse(self._generate_events(job))
        text = await self._collect(job)
        return json_response({"text": text, "meta_info": _meta(job)})

    async def chat(self, req: Request) -> Response:
        body = req.json()
        messages = body["messages"]
        prompt = " ".join(str(m.get("content", "")) for m in messages)
        limit = body.get("max_completion_tokens") or body.get("max_tokens")
        job = self._submit(_count(prompt) + 4 * len(messages), limit, prompt)
        if job is None:
            return self._unavailable()
        usage = bool((body.get("stream_options") or {}).get("include_usage"))
        if body.get("stream"):
            return _sse(self._openai_events(job, "chat.completion.chunk", usage))
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
        job = self._submit(_count(prompt), body.get("max_tokens") or 16, str(prompt))
        if job is None:
            return self._unavailable()
        usage = bool((body.get("stream_options") or {}).get("include_usage"))
        if body.get("stream"):
            return _sse(self._openai_events(job, "text_completion", usage))
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

    def _unavailable(self) -> Response:
        return json_response(
            {"object": "error", "message": "The server is shutting down.", "code": 503}, 503
        )

    async def _tokens(self, job: Job) -> AsyncIterator[str]:
        """The job's text, a piece per scheduler step."""
        words = random.Random(job.rid)
        while (n := await job.stream.get()) is not None:
            yield "".join(" " + words.choice(_WORDS) for _ in range(n))

    async def _collect(self, job: Job) -> str:
        return "".join([piece async for piece in self._tokens(job)]).lstrip()

    async def _generate_events(self, job: Job) -> AsyncIterator[dict]:
        text = ""
        async for piece in self._tokens(job):
            text += piece
            yield {"text": text.lstrip(), "meta_info": _meta(job), "index": 0}

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


def _meta(job: Job) -> dict:
    finish = None
    if job.finish_reason == "length":
        finish = {"type": "length", "length": job.generated}
    elif job.finish_reason == "stop":
        finish = {"type": "stop", "matched": 151645}
    return {
        "id": job.rid,
        "finish_reason": finish,
        "prompt_tokens": job.prompt_tokens,
        "completion_tokens": job.generated,
        "cached_tokens": job.cached_tokens,
    }


def _count(prompt: object) -> int:
    """Token count of a prompt: ids as given, else a token a word plus BOS."""
    if isinstance(prompt, list):
        return len(prompt)
    return len(str(prompt).split()) + 1


def _sse(events: AsyncIterator[dict]) -> Response:
    async def body() -> AsyncIterator[bytes]:
        async for event in events:
            yield f"data: {json.dumps(event)}\n\n".encode()
        yield b"data: [DONE]\n\n"

    return Response(200, content_type="text/event-stream", stream=body())
