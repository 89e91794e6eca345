"""SGLang's HTTP endpoints, answered by the simulated scheduler.

On top of the shared ones (common/api.py): model and server info (the latter with
the server_args dump, the launch command and the release), `/metrics` only with
`--enable-metrics`, and SGLang's native `/generate`, streamed as server-sent events
when asked. The `/get_*` spellings still answer, with the deprecation warning the
release logs for them.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

from sgwatch.sim.common.api import NOT_FOUND, Api, count, sse
from sgwatch.sim.common.http import Handler, Request, Response, json_response
from sgwatch.sim.common.process import ServerStatus
from sgwatch.sim.common.scheduler import Request as Job
from sgwatch.sim.common.scheduler import Scheduler
from sgwatch.sim.common.writer import WARNING
from sgwatch.sim.sglang.args import ServerArgs
from sgwatch.sim.sglang.logfmt import DEPRECATED_ENDPOINTS, Format05
from sgwatch.sim.sglang.metrics_page import SglangMetrics
from sgwatch.sim.sglang.writer import SglangWriter

VERSIONS = {"0.4": "0.4.6.post5", "0.5": "0.5.6", "0.5.23": "0.5.23"}


class SglangApi(Api):
    def __init__(
        self,
        args: ServerArgs,
        fmt: Format05,
        out: SglangWriter,
        scheduler: Scheduler,
        metrics: SglangMetrics,
        status: ServerStatus,
        on_generate: Callable[[], None],
    ) -> None:
        self.args: ServerArgs
        self.metrics: SglangMetrics
        self.fmt, self.out = fmt, out
        super().__init__(args, scheduler, metrics, status, on_generate)

    def routes(self) -> dict[tuple[str, str], Handler]:
        return {
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
        if req.path in DEPRECATED_ENDPOINTS and (note := self.fmt.deprecated_endpoint(req.path)):
            self.out.log(note, level=WARNING)
        return await super().handle(req)

    def _unavailable(self) -> Response:
        return json_response(
            {"object": "error", "message": "The server is shutting down.", "code": 503}, 503
        )

    # -- info -------------------------------------------------------------------

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
        info = {**a.dump, "launch_command": a.launch_command}
        if (startup := self.metrics.startup_time) is not None:  # releases that report it
            info["startup_time"] = startup
        return json_response({**info, "version": VERSIONS[a.format], "internal_states": [state]})

    async def metrics_page(self, req: Request) -> Response:
        if not self.args.enable_metrics:
            return json_response(NOT_FOUND, 404)
        return await super().metrics_page(req)

    # -- generation ---------------------------------------------------------------

    async def generate(self, req: Request) -> Response:
        body = req.json()
        params = body.get("sampling_params") or {}
        prompt = body.get("text") or body.get("input_ids") or ""
        job = self._submit(count(prompt), int(params.get("max_new_tokens", 128)), str(prompt))
        if job is None:
            return self._unavailable()
        if body.get("stream"):
            return sse(self._generate_events(job))
        text = await self._collect(job)
        return json_response({"text": text, "meta_info": _meta(job)})

    async def _generate_events(self, job: Job) -> AsyncIterator[dict]:
        text = ""
        async for piece in self._tokens(job):
            text += piece
            yield {"text": text.lstrip(), "meta_info": _meta(job), "index": 0}


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
