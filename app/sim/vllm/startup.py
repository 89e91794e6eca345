"""Plays a vLLM V1 start-up (0.11): API server, engine core, workers, then ready.

The order and wording follow real 0.10.2/0.11 logs: the API server's banner and
`non-default args`, the engine core's config line, weights (the shard bar on
rank 0, `Loading weights took`, `Model loading took`), torch.compile (Dynamo
transform, one dynamic-shape graph compiled, the total), the KV cache (per
worker, then the engine core's size and concurrency), the CUDA-graph captures
(a PIECEWISE bar for mixed prefill-decode batches, then a FULL one for decode,
rank 0 only), `init engine ... took`, and the API server's routes.

Memory follows vLLM's rule: weights, peak activations and the KV cache share
`total * --gpu-memory-utilization`; CUDA graphs are captured outside that
budget, so a utilisation close to 1 leaves them no room and the capture dies
with CUDA out of memory (the engine core fails to start; the API server
reports `Engine core initialization failed`).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from sgwatch.sim.common import bars, proctree
from sgwatch.sim.common.clock import SimClock
from sgwatch.sim.common.gpustate import IDLE_MIB, GpuSpec, Publisher
from sgwatch.sim.common.model import shards as checkpoint_shards
from sgwatch.sim.common.oom import cuda_oom
from sgwatch.sim.common.writer import ERROR
from sgwatch.sim.vllm.args import VllmArgs
from sgwatch.sim.vllm.compilecache import cache_root, compile_cache
from sgwatch.sim.vllm.flags import VERSION
from sgwatch.sim.vllm.log import VllmWriter

CONTEXT_GIB = 0.6  # CUDA context and NCCL buffers, outside the budget
ACTIVATION_GIB = 1.4  # the profiling run's peak
NON_TORCH_GIB = 0.2
SITE = "/usr/local/lib/python3.12/dist-packages/vllm"
# Where a capture that runs out of memory raises, below the engine core's own frames.
CAPTURE_FRAMES = [
    f'  File "{SITE}/v1/engine/core.py", line 207, in _initialize_kv_caches',
    "    self.model_executor.initialize_from_config(kv_cache_configs)",
    f'  File "{SITE}/v1/worker/gpu_worker.py", line 344, in compile_or_warm_up_model',
    "    cuda_graph_memory_bytes = self.model_runner.capture_model()",
    f'  File "{SITE}/v1/worker/gpu_model_runner.py", line 3446, in capture_model',
    "    self._capture_cudagraphs(",
    f'  File "{SITE}/v1/worker/gpu_model_runner.py", line 3530, in _capture_cudagraphs',
    "    self._dummy_run(num_tokens,",
]
ROUTES = (
    ("/health", "GET"),
    ("/load", "GET"),
    ("/v1/models", "GET"),
    ("/version", "GET"),
    ("/v1/chat/completions", "POST"),
    ("/v1/completions", "POST"),
    ("/metrics", "GET"),
)


@dataclass(frozen=True, slots=True)
class Memory:
    weights: float  # per rank
    kv: float  # <= 0: no room for the cache blocks
    graphs: float  # what the captures take
    graph_room: float  # what is left for them outside the budget

    @property
    def capture_fails(self) -> bool:
        return self.graphs > self.graph_room


def plan_memory(args: VllmArgs, spec: GpuSpec) -> Memory:
    weights = args.model.weights_gib / args.tp
    budget = spec.mem_gib * args.gpu_memory_utilization
    kv = budget - weights - ACTIVATION_GIB - NON_TORCH_GIB
    graphs = 0.0
    if args.piecewise:
        graphs += 0.3 + 0.012 * len(args.capture_sizes)
    if args.full:
        graphs += 0.02 * len(args.full_sizes)
    graphs *= 1 + args.model.params_b / args.tp / 400
    return Memory(weights, kv, graphs, spec.mem_gib - budget - CONTEXT_GIB)


class VllmStartup:
    def __init__(
        self,
        args: VllmArgs,
        out: VllmWriter,
        gpus: Publisher,
        clock: SimClock,
        spec: GpuSpec,
    ) -> None:
        self.args, self.out, self.gpus, self.clock, self.spec = args, out, gpus, clock, spec
        self.rng = random.Random(args.run.sim.seed)
        self.ranks = list(range(args.tp))
        self.mem = plan_memory(args, spec)
        self.kv_tokens = 0

    async def banner(self) -> None:
        """What the API server logs before it binds its port."""
        await self.clock.sleep(3.0)  # importing torch and vLLM
        self.out.platform()
        self.out.api("api_server.py:1839", f"vLLM API server version {VERSION}")
        self.out.api("utils.py:233", f"non-default args: {self.args.non_default!r}")

    async def run(self) -> bool:
        """After the banner: True when the engine is up; False after a crash was logged."""
        a, out = self.args, self.out
        await self.clock.sleep(1.5)
        out.api("model.py:547", f"Resolved architecture: {a.model.arch}")
        out.api("model.py:1510", f"Using max model len {a.max_model_len}")
        out.api(
            "scheduler.py:205",
            f"Chunked prefill is enabled with max_num_batched_tokens={a.max_num_batched_tokens}.",
        )
        await self.clock.sleep(3.0)  # the engine core process starts
        out.core_pid = proctree.spawn_titled(["VLLM::EngineCore"])[0]
        out.platform()
        out.core("core.py:644", "Waiting for init message from front-end.")
        t_core = self.clock.elapsed()
        out.core(
            "core.py:77", f"Initializing a V1 LLM engine (v{VERSION}) with config: {self._config()}"
        )
        if a.tp > 1:  # the engine core starts a worker process per rank
            out.worker_pids = proctree.spawn_titled([f"VLLM::Worker_TP{r}" for r in self.ranks])
            await self.clock.sleep(2.0)  # the workers import vLLM
            for _ in self.ranks:
                out.platform()
        await self.clock.sleep(1.0 + 0.4 * math.log2(a.tp))
        self._ramp_all(CONTEXT_GIB, 1.0)
        if not await self._weights():
            return False
        if not a.enforce_eager:
            await self._compile()
        if not await self._kv_cache():
            return False
        if a.run.cuda_graph and not await self._captures():
            return False
        await self.clock.sleep(0.5)
        out.core(
            "core.py:210",
            "init engine (profile, create kv cache, warmup model) took "
            f"{self.clock.elapsed() - t_core:.2f} seconds",
        )
        blocks = self.kv_tokens // 16
        out.api(
            "loggers.py:147",
            f"Engine 000: vllm cache_config_info with initialization after num_gpu_blocks is: "
            f"{blocks}",
        )
        out.api("api_server.py:1634", "Supported_tasks: ['generate']")
        host = a.run.host or "0.0.0.0"
        out.api("api_server.py:1912", f"Starting vLLM API server 0 on http://{host}:{a.run.port}")
        out.api("launcher.py:34", "Available routes are:")
        for path, methods in ROUTES:
            out.api("launcher.py:42", f"Route: {path}, Methods: {methods}")
        return True

    # -- stages -------------------------------------------------------------------

    async def _weights(self) -> bool:
        a, out = self.args, self.out
        await self._each_worker(
            lambda r: ("weight_utils.py:392", "Using model weights format ['*.safetensors']")
        )
        shards = checkpoint_shards(a.model.weights_gib)
        seconds = 1.0 + self.mem.weights / 1.6
        t0 = self.clock.elapsed()
        self._ramp_all(CONTEXT_GIB + self.mem.weights, seconds)
        name = "Loading safetensors checkpoint shards"
        out.bar_start()
        for i in range(shards + 1):
            if i:
                await self.clock.sleep(seconds / shards)
            out.frame(bars.loading(name, i, shards, self.clock.elapsed() - t0))
        # tqdm's close draws the final state once more, then ends the line
        out.frame(bars.loading(name, shards, shards, self.clock.elapsed() - t0), newline=True)
        took = self.clock.elapsed() - t0
        await self._each_worker(
            lambda r: (
                "default_loader.py:267",
                f"Loading weights took {took + self._jitter(0.3):.2f} seconds",
            )
        )
        await self._each_worker(
            lambda r: (
                "gpu_model_runner.py:2653",
                f"Model loading took {self.mem.weights:.4f} GiB and "
                f"{took + 1.1 + self._jitter(0.2):.6f} seconds",
            )
        )
        return True

    async def _compile(self) -> None:
        a = self.args
        slice_b = a.model.params_b / a.tp
        cached = compile_cache(a)
        key = cached[0] if cached else f"{self.rng.getrandbits(40):010x}"
        hit = cached is not None and cached[1]
        await self.clock.sleep(2.0)
        dynamo = 3.0 + 0.12 * slice_b
        await self._each_worker(
            lambda r: (
                "backends.py:548",
                f"Using cache directory: {cache_root()}/torch_compile_cache/{key}/rank_{r}_0/"
                "backbone for vLLM's torch.compile",
            )
        )
        await self.clock.sleep(dynamo)
        await self._each_worker(
            lambda r: (
                "backends.py:559",
                f"Dynamo bytecode transform time: {dynamo + self._jitter(0.3):.2f} s",
            )
        )
        if hit:  # a second run with the cache kept: its graphs load in a fraction of the time
            load_s = 1.0 + 0.03 * slice_b
            await self.clock.sleep(load_s)
            await self._each_worker(
                lambda r: (
                    "backends.py:164",
                    "Directly load the compiled graph(s) for dynamic shape from the cache, "
                    f"took {load_s + self._jitter(0.1):.3f} s",
                )
            )
            total = dynamo + load_s
        else:
            await self.clock.sleep(1.5)
            await self._each_worker(
                lambda r: ("backends.py:197", "Cache the graph for dynamic shape for later use")
            )
            compile_s = 6.0 + 0.25 * slice_b
            self.gpus.util(1.0)
            await self.clock.sleep(compile_s)
            await self._each_worker(
                lambda r: (
                    "backends.py:218",
                    f"Compiling a graph for dynamic shape takes "
                    f"{compile_s + self._jitter(0.3):.2f} s",
                )
            )
            total = dynamo + compile_s + 1.5
        await self._each_worker(
            lambda r: (
                "monitor.py:34",
                f"torch.compile takes {total + self._jitter(0.3):.2f} s in total",
            )
        )

    async def _kv_cache(self) -> bool:
        a, out = self.args, self.out
        await self.clock.sleep(1.5)  # the profiling run
        kv = self.mem.kv
        if kv <= 0:
            self._fail(
                "ValueError: No available memory for the cache blocks. Try increasing "
                "`gpu_memory_utilization` when initializing the engine.",
                [
                    f'  File "{SITE}/v1/engine/core.py", line 199, in _initialize_kv_caches',
                    "    kv_cache_configs = get_kv_cache_configs(vllm_config, kv_cache_specs,",
                    f'  File "{SITE}/v1/core/kv_cache_utils.py", line 699, '
                    "in check_enough_kv_cache_memory",
                    '    raise ValueError("No available memory for the cache blocks. "',
                ],
            )
            return False
        await self._each_worker(
            lambda r: ("gpu_worker.py:298", f"Available KV cache memory: {kv - 0.03 * r:.2f} GiB")
        )
        self._ramp_all(CONTEXT_GIB + self.mem.weights + ACTIVATION_GIB + kv, 0.6)
        self.kv_tokens = int(kv * 2**30 / a.model.kv_bytes_per_token(a.tp)) // 16 * 16
        await self.clock.sleep(0.4)
        out.core("kv_cache_utils.py:1087", f"GPU KV cache size: {self.kv_tokens:,} tokens")
        out.core(
            "kv_cache_utils.py:1091",
            f"Maximum concurrency for {a.max_model_len:,} tokens per request: "
            f"{self.kv_tokens / a.max_model_len:.2f}x",
        )
        return True

    async def _captures(self) -> bool:
        a, out = self.args, self.out
        t0 = self.clock.elapsed()
        slice_b = a.model.params_b / a.tp
        passes = []
        if a.piecewise:
            passes.append(
                ("mixed prefill-decode, PIECEWISE", a.capture_sizes, 0.06 + 0.004 * slice_b)
            )
        if a.full:
            passes.append(("decode, FULL", a.full_sizes, 0.04 + 0.003 * slice_b))
        items = sum(len(sizes) for _, sizes, _ in passes)
        fail_at = None
        if self.mem.capture_fails:  # the largest sizes go first and take the most
            fail_at = int(max(self.mem.graph_room, 0.0) / self.mem.graphs * items * 0.5)
        base = CONTEXT_GIB + self.mem.weights + ACTIVATION_GIB + max(self.mem.kv, 0.0)
        self._ramp_all(base + min(self.mem.graphs, self.mem.graph_room), 4.0)
        self.gpus.util(38.0)
        done = 0
        for label, sizes, per_item in passes:
            desc = f"Capturing CUDA graphs ({label})"
            start = self.clock.elapsed()
            out.bar_start()
            for i in range(len(sizes)):
                out.frame(bars.bar(desc, i, len(sizes), self.clock.elapsed() - start))
                await self.clock.sleep(per_item + (1.0 if i == 0 else 0.0))
                if done == fail_at:
                    self.gpus.util(0.0)
                    want = max(0.25, self.mem.graphs / items * 8)
                    oom = cuda_oom(0, want, self.spec.mem_gib - 0.46, 0.12)
                    self._fail(f"torch.OutOfMemoryError: {oom}", CAPTURE_FRAMES)
                    return False
                done += 1
            out.frame(
                bars.bar(desc, len(sizes), len(sizes), self.clock.elapsed() - start),
                newline=True,
            )
        self.gpus.util(0.0)
        took = self.clock.elapsed() - t0
        await self._each_worker(
            lambda r: (
                "gpu_model_runner.py:3480",
                f"Graph capturing finished in {took + self._jitter(0.4):.0f} secs, "
                f"took {self.mem.graphs:.2f} GiB",
            )
        )
        return True

    # -- failure --------------------------------------------------------------------

    def _fail(self, error: str, where: list[str]) -> None:
        """The engine core's `EngineCore failed to start.` with the exception, raised at
        `where` (frames), then the API server's own traceback (the handshake failed)."""
        out = self.out
        frames = [
            "EngineCore failed to start.",
            "Traceback (most recent call last):",
            f'  File "{SITE}/v1/engine/core.py", line 699, in run_engine_core',
            "    engine_core = EngineCoreProc(*args, **kwargs)",
            f'  File "{SITE}/v1/engine/core.py", line 498, in __init__',
            "    super().__init__(vllm_config, executor_class, log_stats,",
            f'  File "{SITE}/v1/engine/core.py", line 92, in __init__',
            "    self._initialize_kv_caches(vllm_config)",
            *where,
            error,
        ]
        out.record(out.core_tag(), "core.py:708", "\n".join(frames), ERROR)
        api = [
            "Traceback (most recent call last):",
            '  File "/usr/local/bin/vllm", line 10, in <module>',
            "    sys.exit(main())",
            f'  File "{SITE}/entrypoints/cli/main.py", line 54, in main',
            "    args.dispatch_function(args)",
            f'  File "{SITE}/entrypoints/cli/serve.py", line 57, in cmd',
            "    uvloop.run(run_server(args))",
            f'  File "{SITE}/v1/engine/utils.py", line 732, in launch_core_engines',
            "    wait_for_engine_startup(",
            f'  File "{SITE}/v1/engine/utils.py", line 785, in wait_for_engine_startup',
            '    raise RuntimeError("Engine core initialization failed. "',
            '                       "See root cause above. "',
            '                       f"Failed core proc(s): {finished}")',
            "RuntimeError: Engine core initialization failed. See root cause above. "
            "Failed core proc(s): {}",
        ]
        out.tagged(out.api_tag(), api)

    # -- helpers ----------------------------------------------------------------------

    def _config(self) -> str:
        a = self.args
        m = a.run.model_path
        spec = (
            f"SpeculativeConfig(method='{a.spec_method}', model='{m}', "
            f"num_spec_tokens={a.num_spec_tokens})"
            if a.spec_method
            else "None"
        )
        return (
            f"model='{m}', speculative_config={spec}, tokenizer='{m}', skip_tokenizer_init=False, "
            "tokenizer_mode=auto, revision=None, tokenizer_revision=None, trust_remote_code=False, "
            f"dtype={a.run.dtype}, max_seq_len={a.max_model_len}, download_dir=None, "
            "load_format=auto, "
            f"tensor_parallel_size={a.tp}, pipeline_parallel_size=1, data_parallel_size=1, "
            f"disable_custom_all_reduce=False, quantization=None, enforce_eager={a.enforce_eager}, "
            "kv_cache_dtype=auto, device_config=cuda, seed=0, "
            f"served_model_name={a.run.served_model_name}, enable_prefix_caching=True, "
            f'enable_chunked_prefill=True, compilation_config={{"cudagraph_mode": '
            f'"{a.cudagraph_mode}", "cudagraph_capture_sizes": {a.capture_sizes}, '
            f'"max_capture_size": {max(a.capture_sizes)}}}'
        )

    async def _each_worker(self, line) -> None:
        """Every worker logs its line, in a random order within a fraction of a second."""
        order = self.rng.sample(self.ranks, len(self.ranks))
        for r in order:
            await self.clock.sleep(self.rng.uniform(0.0, 0.1) if len(order) > 1 else 0.0)
            src, text = line(r)
            self.out.worker(r, src, text)

    def _ramp_all(self, gib: float, seconds: float) -> None:
        start = self.clock.wall_at(self.clock.elapsed())
        mib = min(self.spec.mem_mib - IDLE_MIB, gib * 1024)
        for r in self.ranks:
            self.gpus.ramp(r, mib, start, start + seconds / self.clock.speed)

    def _jitter(self, scale: float) -> float:
        return self.rng.uniform(-scale, scale)
