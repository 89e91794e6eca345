"""SGLang's log lines, spelled per release family (`--sim-format`).

Every string here is a format seen in the shared real logs or documented in
docs/design/log-formats.md; the drift between families is the point:

- 0.4 (mid-2025): `ServerArgs(...)` dump, `Init torch distributed begin.`,
  `Capture cuda graph begin. ...` + `Capture cuda graph bs [...]`, a
  `Capturing batches (avail_mem=...)` bar, `KV Cache is allocated. #tokens:
  ...`, `Prefill batch. ...`/`Decode batch. ...` with a period.
- 0.5 (late 2025 to mid 2026): as 0.4 but `Capturing batches (bs=N ...)`,
  `KV Cache is allocated. dtype: ...`, piecewise graphs announced by
  `Capture cuda graph num tokens [...]` with compile and capture bars, and
  `Prefill batch, ...`/`Decode batch, ...` with commas.
- 0.5.23: dict dump, `Init parallel begin.`, `Load weight end. elapsed=...`,
  per-role `Capture target decode CUDA graph begin. backend=full, ...`, the
  prefill graph before decode, `Engine startup timings (s): ...`.

Where no line is on record for a family (draft-graph captures before 0.5.23),
only the tqdm bar is drawn. tests/sim/families.toml ties each line to its source.
"""

from __future__ import annotations

from sgwatch.sim.sglang.timeline import Capture

DEPRECATED_ENDPOINTS = {"/get_model_info": "/model_info", "/get_server_info": "/server_info"}


class Format05:
    name = "0.5"
    batch_sep = ","  # "Decode batch," (0.4: "Decode batch.")
    warmup_info_path = "/get_model_info"
    site = "/usr/local/lib/python3.12/dist-packages"

    # -- boot -----------------------------------------------------------------

    def entrypoint_warning(self) -> list[str]:
        return [
            f"{self.site}/sglang/launch_server.py:41: UserWarning: 'python -m "
            "sglang.launch_server' is still supported, but 'sglang serve' is the "
            "recommended entrypoint.",
            "  Example: sglang serve --model-path <model> [options]",
            "  warnings.warn(",
        ]

    def server_args(self, dump: dict[str, object]) -> str:
        inner = ", ".join(f"{k}={v!r}" for k, v in dump.items())
        return f"server_args=ServerArgs({inner})"

    def attention_default(self, backend: str) -> str:
        return f"Attention backend not specified. Use {backend} backend by default."

    def multimodal_notes(self, mem_fraction: float | None) -> list[str]:
        """What resolution logs for a multimodal model (0.5: nothing, only the dump)."""
        return []

    def spec_notes(self) -> list[str]:
        """What resolution warns for EAGLE-family speculative decoding with spec v2 off
        (0.5.x `ServerArgs._handle_speculative_decoding`). Its 48-request cap shows in
        the dump only: no real log of ours prints that warning."""
        return [
            "WARNING:sglang.srt.server_args:Overlap scheduler is disabled because of using "
            "eagle speculative decoding."
        ]

    # -- scheduler startup ------------------------------------------------------

    def dist_begin(self) -> str:
        return "Init torch distributed begin."

    def dist_end(self, elapsed: float, mem_usage: float) -> list[str]:
        return [f"Init torch distributed ends. mem usage={mem_usage:.2f} GB"]

    def load_begin(self, avail: float) -> str:
        return f"Load weight begin. avail mem={avail:.2f} GB"

    def weights_format(self) -> str:
        return "Using model weights format ['*.safetensors']"

    def load_end(self, elapsed: float, arch: str, dtype: str, avail: float, usage: float) -> str:
        return (
            f"Load weight end. type={arch}, dtype={dtype}, avail mem={avail:.2f} GB, "
            f"mem usage={usage:.2f} GB."
        )

    def kv_allocated(self, dtype: str, tokens: int, k: float, v: float) -> str:
        return (
            f"KV Cache is allocated. dtype: {dtype}, #tokens: {tokens}, "
            f"K size: {k:.2f} GB, V size: {v:.2f} GB"
        )

    def pool_end(self, avail: float) -> str:
        return f"Memory pool end. avail mem={avail:.2f} GB"

    def prefill_disabled(self) -> str | None:
        """Said when the prefill graph is off (a 0.5.23 notion)."""
        return None

    def moe_config(self, path: str) -> str:
        return f"Using MoE kernel config from {path}."

    # -- graph capture ----------------------------------------------------------

    def capture_begin(self, cap: Capture, avail: float, spec: tuple[int, int]) -> str | None:
        """Printed by every rank (drafts: rank 0). None: this family prints no begin."""
        if cap.kind in ("decode", "verify"):
            return (
                "Capture cuda graph begin. This can take up to several minutes. "
                f"avail mem={avail:.2f} GB"
            )
        return None  # drafts: only their bars are on record for these releases

    def capture_sizes(self, cap: Capture) -> str | None:
        """Rank 0 announces the list it captures."""
        if cap.kind in ("decode", "verify"):
            return f"Capture cuda graph bs {cap.sizes}"
        if cap.kind == "piecewise":
            return f"Capture cuda graph num tokens {cap.sizes}"
        return None

    def capture_registering(self, cap: Capture) -> str | None:
        """Custom all-reduce registers the graphs' buffers (tp > 1, decode)."""
        if cap.kind in ("decode", "verify"):
            return f"Registering {97 * len(cap.sizes)} cuda graph addresses"
        return None

    def capture_end(self, cap: Capture, elapsed: float, usage: float, avail: float) -> str | None:
        what = {"decode": "cuda graph", "verify": "cuda graph", "piecewise": "piecewise CUDA graph"}
        if cap.kind not in what:
            return None
        return (
            f"Capture {what[cap.kind]} end. Time elapsed: {elapsed:.2f} s. "
            f"mem usage={usage:.2f} GB. avail mem={avail:.2f} GB."
        )

    def bar_desc(self, cap: Capture, item: int, avail: float) -> str:
        if cap.kind == "piecewise":
            return f"Capturing num tokens (num_tokens={item} avail_mem={avail:.2f} GB)"
        return f"Capturing batches (bs={item} avail_mem={avail:.2f} GB)"

    def compile_desc(self, item: int) -> str:
        return f"Compiling num tokens (num_tokens={item})"

    def bar_starts_blank(self) -> bool:
        """tqdm draws `  0%|...| 0/N` before set_description names the bar."""
        return True

    def dynamo_warning(self) -> list[str]:
        return [
            f"{self.site}/torch/_dynamo/variables/functions.py:1692: UserWarning: Dynamo "
            "detected a call to a `functools.lru_cache`-wrapped function. Dynamo ignores the "
            "cache wrapper and directly traces the wrapped function. Silent incorrectness is "
            "only a *potential* risk, not something we have observed. Enable "
            'TORCH_LOGS="+dynamo" for a DEBUG stack trace.',
            "  torch._dynamo.utils.warn_once(msg)",
        ]

    # -- after capture ----------------------------------------------------------

    def capacity(
        self, tokens: int, chunked: int, prefill: int, running: int, ctx: int, avail: float
    ) -> str:
        return (
            f"max_total_num_tokens={tokens}, chunked_prefill_size={chunked}, "
            f"max_prefill_tokens={prefill}, max_running_requests={running}, "
            f"context_len={ctx}{self.capacity_avail(avail)}"
        )

    def capacity_avail(self, avail: float) -> str:
        """The free memory a capacity line ends with (0.4: none)."""
        return f", available_gpu_mem={avail:.2f} GB"

    def startup_timings(
        self, weights: float, kv: float, e2e: float, graphs: dict, whole: float
    ) -> str | None:
        return None

    # -- serving ----------------------------------------------------------------

    def prefill_batch(
        self,
        new_seq: int,
        new_token: int,
        cached: int,
        usage: float,
        running: int,
        queued: int,
        graph: bool,
        tok_s: float,
    ) -> str:
        return (
            f"Prefill batch{self.batch_sep} #new-seq: {new_seq}, #new-token: {new_token}, "
            f"#cached-token: {cached}, token usage: {usage:.2f}, #running-req: {running}, "
            f"#queue-req: {queued}{self.prefill_extra(graph, tok_s)}"
        )

    def prefill_extra(self, graph: bool, tok_s: float) -> str:
        """What a prefill line says after the queue (0.4: nothing)."""
        return f", cuda graph: {graph}, input throughput (token/s): {tok_s:.2f}"

    def decode_batch(
        self,
        running: int,
        tokens: int,
        usage: float,
        accept: tuple[float, float] | None,
        graph: bool,
        tok_s: float,
        queued: int,
    ) -> str:
        spec = self.accept_note(*accept) if accept else ""
        return (
            f"Decode batch{self.batch_sep} #running-req: {running}, #token: {tokens}, "
            f"token usage: {usage:.2f}, {spec}cuda graph: {graph}, "
            f"gen throughput (token/s): {tok_s:.2f}, #queue-req: {queued}"
        )

    def accept_note(self, length: float, rate: float) -> str:
        """A speculative decode line's acceptance (0.5.23 adds the rate)."""
        return f"accept len: {length:.2f}, "

    def deprecated_endpoint(self, path: str) -> str | None:
        new = DEPRECATED_ENDPOINTS[path]
        return (
            f"Endpoint '{path}' is deprecated and will be removed in a future version. "
            f"Please use '{new}' instead."
        )


class Format04(Format05):
    name = "0.4"
    batch_sep = "."

    def entrypoint_warning(self) -> list[str]:
        return []

    def attention_default(self, backend: str) -> str:
        return f"Attention backend not set. Use {backend} backend by default."

    def multimodal_notes(self, mem_fraction: float | None) -> list[str]:
        if mem_fraction is None:
            return []
        return [
            f"Automatically reduce --mem-fraction-static to {mem_fraction:.3f} "
            "because this is a multimodal model."
        ]

    def kv_allocated(self, dtype: str, tokens: int, k: float, v: float) -> str:
        return f"KV Cache is allocated. #tokens: {tokens}, K size: {k:.2f} GB, V size: {v:.2f} GB"

    def bar_desc(self, cap: Capture, item: int, avail: float) -> str:
        return f"Capturing batches (avail_mem={avail:.2f} GB)"

    def bar_starts_blank(self) -> bool:
        return False

    def capacity_avail(self, avail: float) -> str:
        return ""

    def prefill_extra(self, graph: bool, tok_s: float) -> str:
        return ""

    def deprecated_endpoint(self, path: str) -> str | None:
        return None


class Format0523(Format05):
    name = "0.5.23"
    warmup_info_path = "/model_info"

    def entrypoint_warning(self) -> list[str]:
        lines = super().entrypoint_warning()
        return [lines[0].replace("launch_server.py:41:", "launch_server.py:71:"), *lines[1:]]

    def server_args(self, dump: dict[str, object]) -> str:
        return f"server_args={dump!r}"

    def spec_notes(self) -> list[str]:
        """Spec v2 runs with the overlap scheduler: nothing to say."""
        return []

    def multimodal_notes(self, mem_fraction: float | None) -> list[str]:
        return [
            "Breakable CUDA graph is incompatible with multimodal model; "
            "disabling prefill CUDA graph."
        ]

    def dist_begin(self) -> str:
        return "Init parallel begin."

    def dist_end(self, elapsed: float, mem_usage: float) -> list[str]:
        return [
            f"Init parallel ends. elapsed={elapsed:.2f} s",
            f"Memory baseline taken. mem usage={mem_usage:.2f} GB",
        ]

    def load_end(self, elapsed: float, arch: str, dtype: str, avail: float, usage: float) -> str:
        return (
            f"Load weight end. elapsed={elapsed:.2f} s, type={arch}, avail mem={avail:.2f} GB, "
            f"mem usage={usage:.2f} GB."
        )

    def prefill_disabled(self) -> str:
        return (
            "Disable prefill CUDA graph because cuda_graph_config resolved "
            "prefill.backend='disabled' (e.g. via --cuda-graph-backend-prefill=disabled or "
            "auto-disable rules)."
        )

    def capture_begin(self, cap: Capture, avail: float, spec: tuple[int, int]) -> str | None:
        topk, draft_tokens = spec
        tail = f"avail mem={avail:.2f} GB"
        if cap.kind == "prefill":
            return (
                f"Capture target prefill CUDA graph begin. backend=breakable, "
                f"num_tokens={cap.sizes}, {tail}"
            )
        if cap.kind == "decode":
            return (
                "Capture target decode CUDA graph begin. backend=full, "
                f"num_tokens_per_req=1, {tail}"
            )
        if cap.kind == "verify":
            return (
                "Capture target verify CUDA graph begin. backend=full, "
                f"num_tokens_per_req={draft_tokens}, {tail}"
            )
        per_req = topk if cap.kind == "draft" else draft_tokens
        what = "decode" if cap.kind == "draft" else "extend"
        return (
            f"Capture draft {what} CUDA graph begin. backend=full, "
            f"num_tokens_per_req={per_req}, bs={cap.sizes}, {tail}"
        )

    def capture_sizes(self, cap: Capture) -> str | None:
        return None

    def capture_registering(self, cap: Capture) -> str | None:
        return None

    def capture_end(self, cap: Capture, elapsed: float, usage: float, avail: float) -> str:
        role = {
            "prefill": "target prefill",
            "decode": "target decode",
            "verify": "target verify",
            "draft": "draft decode",
            "draft_extend": "draft extend",
        }[cap.kind]
        bs = f"bs={cap.sizes}, " if cap.kind in ("decode", "verify") else ""
        return (
            f"Capture {role} CUDA graph end. {bs}elapsed={elapsed:.2f} s, "
            f"mem usage={usage:.2f} GB, avail mem={avail:.2f} GB."
        )

    def bar_desc(self, cap: Capture, item: int, avail: float) -> str:
        if cap.kind == "prefill":
            return f"Capturing prefill shape (num_tokens={item} avail_mem={avail:.2f} GB)"
        return f"Capturing batches (bs={item} avail_mem={avail:.2f} GB)"

    def startup_timings(
        self, weights: float, kv: float, e2e: float, graphs: dict, whole: float
    ) -> str | None:
        inner = ", ".join(f"{k}: {v:.2f}" for k, v in graphs.items())
        return (
            f"Engine startup timings (s): load_weight={weights:.2f}, kv_cache_allocation={kv:.2f}, "
            f"scheduler_e2e={e2e:.2f}, cuda_graph={{{inner}}}, tokenizer_e2e={whole:.2f}"
        )

    def prefill_extra(self, graph: bool, tok_s: float) -> str:
        return ", #pending-token: 0" + super().prefill_extra(graph, tok_s)

    def accept_note(self, length: float, rate: float) -> str:
        return f"accept len: {length:.2f}, accept rate: {rate:.2f}, "


_BY_NAME = {f.name: f for f in (Format04, Format05, Format0523)}


def for_version(name: str) -> Format05:
    return _BY_NAME[name]()
