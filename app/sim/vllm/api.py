"""vLLM's HTTP endpoints: the shared OpenAI ones, `/load`, `/version`, and `/metrics`
always on; no native `/generate` (that is SGLang's)."""

from __future__ import annotations

import time

from sgwatch.sim.common.api import Api
from sgwatch.sim.common.http import Handler, Request, Response, json_response
from sgwatch.sim.common.metrics import Metrics
from sgwatch.sim.common.process import ServerStatus
from sgwatch.sim.common.scheduler import Scheduler
from sgwatch.sim.vllm.args import VllmArgs
from sgwatch.sim.vllm.flags import VERSION


class VllmApi(Api):
    def __init__(
        self,
        args: VllmArgs,
        scheduler: Scheduler,
        metrics: Metrics,
        status: ServerStatus,
    ) -> None:
        self.vllm = args
        super().__init__(args.run, scheduler, metrics, status, on_generate=lambda: None)

    def routes(self) -> dict[tuple[str, str], Handler]:
        return {
            ("GET", "/health"): self.health,
            ("GET", "/load"): self.load,
            ("GET", "/v1/models"): self.models,
            ("GET", "/version"): self.version,
            ("GET", "/metrics"): self.metrics_page,
            ("POST", "/v1/chat/completions"): self.chat,
            ("POST", "/v1/completions"): self.completions,
        }

    async def models(self, req: Request) -> Response:
        a = self.args
        model = {
            "id": a.served_model_name,
            "object": "model",
            "created": int(time.time()),
            "owned_by": "vllm",
            "root": a.model_path,
            "parent": None,
            "max_model_len": self.vllm.max_model_len,
            "permission": [],
        }
        return json_response({"object": "list", "data": [model]})

    async def version(self, req: Request) -> Response:
        return json_response({"version": VERSION})

    async def load(self, req: Request) -> Response:
        return json_response({"server_load": len(self.scheduler.active)})

    def _unavailable(self) -> Response:
        return json_response({"detail": "Service Unavailable"}, 503)
