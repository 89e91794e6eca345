"""What a person reading each real SGLang log in the corpus sees in it.

Written by reading the logs (../shared/logs, provenance in its INDEX.tsv), not
by printing what the parser says. Per file:
  state, ready     the state at the end of the file and whether the ready line was seen
  captures         [(kind, done, total, ended)] in order; None where the log does not say
  crash            words the crash summary must contain (None: no crash)
  exit_code        exit status the crash implies (137 after sigquit/kill_process_tree,
                   2 for argparse), when known
  tput             (samples, last, max, median) of gen throughput; accept = mean accept len
  weights          (done, total) of the weight-loading bar, when one is shown
  model            model_path from the resolved-arguments dump, when the log has one
  compile          (cache "hit"/"miss"/None, seconds) of torch.compile; absent: no line
  changes          the effects of what the server changed on its own that cost speed
"""

E = {
    # bench_latency 0.3.x: capture begins (no bs list, no end line); the bare capacity
    # line follows, so capture is over. The KeyError traceback is multiprocessing's
    # resource tracker at exit, not the server; bench "Decode. latency" lines are not
    # server batch lines.
    "sglang-0.3.x-rocm-bench-latency-startup-1.log": dict(
        state="warming_up",
        ready=False,
        captures=[("decode", None, None, True)],
        crash=None,
        tput=(0, None, None, None),
        weights=(4, 4),
    ),
    # Only the 8 ranks' old-format end lines, then the capacity line.
    "sglang-0.4.3-tp8-capture-end-oldfmt-bench-1.log": dict(
        state="warming_up",
        ready=False,
        captures=[("decode", None, None, True)],
        capture_seconds=[12.16],
        crash=None,
        tput=(0, None, None, None),
    ),
    # --disable-cuda-graph: no capture at all; warmup prefill before the ready line,
    # then chat traffic with 4 decode lines; "can be ignored" lines are not crashes.
    "sglang-0.4.4-startup-nocudagraph-serving-cr-1.log": dict(
        state="serving",
        ready=True,
        captures=[],
        crash=None,
        tput=(4, 95.50, 98.01, (85.69 + 95.50) / 2),
        weights=(4, 4),
        model="meta-llama/Meta-Llama-3.1-8B-Instruct",
    ),
    "sglang-0.4.6.post2-startup-serving-1.log": dict(
        state="ready",
        ready=True,
        captures=[("decode", 4, 4, True)],
        capture_seconds=[24.85],
        crash=None,
        tput=(0, None, None, None),
        weights=(1, 1),
        model="/mnt/d/gx/Desktop/Model/Qwen3-0___6B",
    ),
    # DP rank 3 asserts in the DSv4 KV pool: a bare AssertionError; where it failed
    # is the actionable part.
    "sglang-0.5.11.dev-dp4-crash-mempool-rocm-1.log": dict(
        state="crashed",
        ready=False,
        captures=[],
        crash=["AssertionError", "deepseekv4_memory_pool.py:144"],
        crash_phase="allocating_kv_cache",  # its frames: ModelRunner.init_memory_pool
    ),
    "sglang-0.5.19-load-ready-lines-1.log": dict(
        state="ready",
        ready=True,
        captures=[],
        crash=None,
        tput=(0, None, None, None),
        weights_seconds=30.73,
    ),
    # Both ranks begin, TP0 lists bs [1, 2, 4, 8, 10]; the bar is at 0/5 with TP1's
    # line glued on.
    "sglang-0.5.6-musa-tp2-capture-1.log": dict(
        state="capturing_graphs",
        ready=False,
        captures=[("decode", 0, 5, False)],
        crash=None,
    ),
    # --log-level warning: only bars. decode 3/3, compile 58/58, piecewise capture 58/58,
    # all closed; then two deprecated-endpoint lines (warmup probes), no ready line.
    "sglang-0.5.9-piecewise-compile-capture-cr-loglevel-warning-1.log": dict(
        state="warming_up",
        ready=False,
        captures=[("decode", 3, 3, True), ("compile", 58, 58, True), ("piecewise", 58, 58, True)],
        crash=None,
        weights=(1, 1),
    ),
    # End lines only (two boots joined); no bs lists, so done/total unknown.
    "sglang-unknown-2026-07-tp3-capture-end-newfmt-2.log": dict(
        state="warming_up",
        ready=False,
        captures=[("decode", None, None, True), ("prefill", None, None, True)],
        capture_seconds=[4.83, 3.83],
        crash=None,
    ),
    "sglang-unknown-2026-08-newest-capture-fmt-ready-1.log": dict(
        state="ready",
        ready=True,
        captures=[("decode", 2, 2, True)],
        capture_seconds=[2.58],
        crash=None,
        weights=(32, 32),
        weights_seconds=100.59,
    ),
    # The closing 23/23 frame is cut mid-rate but says 23/23.
    "sglang-unknown-capture-flashinfer-jit-1.log": dict(
        state="warming_up",
        ready=False,
        captures=[("decode", 23, 23, True)],
        crash=None,
    ),
    # argparse usage printed; the error line itself is past the excerpt.
    "sglang-unknown-crash-argparse-usage-1.log": dict(
        state="crashed",
        ready=False,
        captures=[],
        crash=["argument parsing failed"],
        exit_code=2,
    ),
    # The sigquit is past the excerpt: it ends at the (cut) capacity line.
    "sglang-unknown-crash-embedding-sigquit-1.log": dict(
        state="warming_up",
        ready=False,
        captures=[],
        crash=None,
        weights=(1, 1),
    ),
    "sglang-unknown-crash-nccl-unhandled-system-error-1.log": dict(
        state="crashed",
        ready=False,
        captures=[],
        crash=["RuntimeError", "NCCL error: unhandled system error"],
        exit_code=137,
        crash_phase="starting",  # distributed init
    ),
    # 8 DP ranks, 5 complete decode lines (the 6th is cut at "Decod").
    "sglang-unknown-dp8-spec-mtp-serving-1.log": dict(
        state="serving",
        ready=False,
        captures=[],
        crash=None,
        tput=(5, 152.08, 173.06, 168.28),
        accept=(2.90 + 2.86 + 2.94 + 2.65 + 2.58) / 5,
    ),
    "sglang-unknown-musa-dp2-tp2-startup-1.log": dict(
        state="starting",
        ready=False,
        captures=[],
        crash=None,
    ),
    # Decode capture 52/52 ended (5.37 s); the piecewise num-tokens list is cut before
    # its closing bracket, so its total is unknown.
    "sglang-unknown-piecewise-capture-1.log": dict(
        state="capturing_graphs",
        ready=False,
        captures=[("decode", 52, 52, True), ("piecewise", None, None, False)],
        capture_seconds=[5.37, None],
        crash=None,
    ),
    "sglang-unknown-ray-worker-prefix-startup-1.log": dict(
        state="starting",
        ready=False,
        captures=[],
        crash=None,
    ),
    "sglang-unknown-serving-decode-2.log": dict(
        state="serving",
        ready=False,
        captures=[],
        crash=None,
        tput=(9, 184.38, 186.99, 185.33),
    ),
    "sglang-unknown-serving-decode-6.log": dict(
        state="serving",
        ready=False,
        captures=[],
        crash=None,
        tput=(4, 97.50, 97.63, (97.52 + 97.58) / 2),
    ),
    "sglang-unknown-serving-decode-newfmt-1.log": dict(
        state="serving",
        ready=False,
        captures=[],
        crash=None,
        tput=(8, 157.11, 157.64, (144.10 + 144.95) / 2),
    ),
    "sglang-unknown-serving-prefill-decode-newfmt-3.log": dict(
        state="serving",
        ready=False,
        captures=[],
        crash=None,
        tput=(1, 1635.11, 1635.11, 1635.11),
    ),
    # EAGLE at warning level: three "Capturing batches" bars of 4 (target, then the
    # draft's two) with the draft's weights loaded in between; no begin lines name them,
    # the draft's weights do.
    "sglang-unknown-spec-eagle-capture-cr-loglevel-warning-1.log": dict(
        state="warming_up",
        ready=False,
        captures=[("decode", 4, 4, True), ("draft", 4, 4, True), ("draft_extend", 4, 4, True)],
        crash=None,
        weights=(1, 1),
        changes=["overlap scheduler off (the GPU waits on the CPU)"],
    ),
    "sglang-unknown-startup-gloo-1.log": dict(
        state="loading_weights",
        ready=False,
        captures=[],
        crash=None,
        weights=(2, 4),
    ),
    "sglang-unknown-startup-serving-2.log": dict(
        state="serving",
        ready=True,
        captures=[("decode", 4, 4, True)],
        capture_seconds=[18.28],
        crash=None,
        tput=(3, 440.34, 444.84, 440.34),
        weights=(1, 1),
    ),
    # The traceback is cut before its exception line.
    "sglang-unknown-tp-crash-spec-eagle3-startup-2.log": dict(
        state="crashed",
        ready=False,
        captures=[],
        crash=["Scheduler hit an exception"],
    ),
    # Decode 36/36 ended on both ranks; the piecewise list of 58 is announced and
    # torch._dynamo warnings follow: compiling, none captured yet.
    "sglang-unknown-tp2-piecewise-capture-2.log": dict(
        state="compiling",
        ready=False,
        captures=[("decode", 36, 36, True), ("piecewise", 0, 58, False)],
        capture_seconds=[11.39, None],
        crash=None,
    ),
    "sglang-unknown-tp4-capture-1.log": dict(
        state="capturing_graphs",
        ready=False,
        captures=[("decode", 0, 52, False)],
        crash=None,
    ),
    "sglang-unknown-tp4-load-weight-end-1.log": dict(
        state="allocating_kv_cache",
        ready=False,
        captures=[],
        crash=None,
        weights=(1, 1),
    ),
    "sglang-unknown-tp8-multinode-mtp-startup-1.log": dict(
        state="starting",
        ready=False,
        captures=[],
        crash=None,
    ),
    "sglang-unknown-tp8-startup-init-1.log": dict(
        state="loading_weights",
        ready=False,
        captures=[],
        crash=None,
        weights=(0, 30),
    ),
}

# What a person reading each real vLLM log sees in it (same reading, same keys), plus:
#   version      the release the log states
#   kv_tokens    the KV cache size (the smallest worker's, which the engine uses)
#   requests     HTTP requests other than health checks
#   crash_phase  the state the server died in
#   overrides    {setting: value the server runs with} from its warnings
# vLLM prints no year: times are the time of day. Its throughput line is every 10 s
# while requests run; a 0.0 tok/s window (idle) is no sample.
V = {
    # From the end of torch.compile to serving: KV cache sized per worker (8 lines, the
    # smallest 237,344), one piecewise bar to 67/67 (its last frame only), the ranks'
    # "finished in 53/54 secs", init engine, routes, uvicorn's startup complete, then
    # 10 stats lines (one 0.0 while idle) and two chat requests.
    "vllm-0.10.2-tp8-ep-capture-ready-serving-4.log": dict(
        state="serving",
        ready=True,
        captures=[("piecewise", 67, 67, True)],
        capture_seconds=[54.0],
        crash=None,
        tput=(9, 39.3, 40.1, 39.0),
        kv_tokens=237344,
        requests=2,
        compile=(None, 147.63),  # the 8 ranks' totals only: the cache is not said
    ),
    # NCCL and Gloo set-up of 8 workers (Gloo lines garbled by concurrent writes); each
    # says custom all-reduce is off on more than two PCIe-only GPUs.
    "vllm-0.10.2-tp8-ep-startup-gloo-interleave-2.log": dict(
        state="starting",
        ready=False,
        captures=[],
        crash=None,
        overrides={"disable_custom_all_reduce": True},
        changes=["NCCL all-reduce instead of vLLM's custom one"],
    ),
    "vllm-0.10.2-tp8-ep-startup-launch-1.log": dict(
        state="starting",
        ready=False,
        captures=[],
        crash=None,
        version="0.10.2",
        model="Qwen/Qwen3-235B-A22B-Instruct-2507-FP8",
        tp_size=8,
    ),
    # Weights (24/24 shards; the slowest worker 13.65 s after a 272 s download), then
    # Dynamo and Inductor on every worker: still compiling at the end.
    "vllm-0.10.2-tp8-ep-weights-compile-3.log": dict(
        state="compiling",
        ready=False,
        captures=[],
        crash=None,
        weights=(24, 24),
        weights_seconds=13.65,
        compile=("miss", 126.49),  # the slowest rank's graph; the totals are past the end
    ),
    # V0 runner: KV blocks, "Capturing cudagraphs for decoding", its bar cut before n/M.
    "vllm-0.10.x-v0-style-capture-startup-4.log": dict(
        state="capturing_graphs",
        ready=False,
        captures=[("decode", None, None, False)],
        crash=None,
        weights_seconds=0.39,
    ),
    # Two workers' send threads die with the same AttributeError (interleaved), then the
    # engine waits on its broadcast queue every 60 s.
    "vllm-0.13.0-tp8-pd-crash-ansi-stripped-1.log": dict(
        state="crashed",
        ready=False,
        captures=[],
        crash=["AttributeError", "'NoneType' object has no attribute 'shape'"],
    ),
    # V0 metrics lines: 0.1 then 12.0 tok/s (the third is cut before its rate).
    "vllm-0.4.x-serving-stats-request-4.log": dict(
        state="serving",
        ready=False,
        captures=[],
        crash=None,
        tput=(2, 12.0, 12.0, (0.1 + 12.0) / 2),
    ),
    # The capture begins, its bar reaches 35/35, finished in 14 secs: warmup goes on.
    "vllm-0.6.5-capture-shapes-tqdm-v0-2.log": dict(
        state="warming_up",
        ready=False,
        captures=[("decode", 35, 35, True)],
        capture_seconds=[14.0],
        crash=None,
    ),
    # Weights taken (14.96 GB), memory profiled, GPU blocks counted (not tokens).
    "vllm-0.6.x-startup-kv-blocks-v0-6.log": dict(
        state="allocating_kv_cache",
        ready=False,
        captures=[],
        crash=None,
    ),
    "vllm-0.8.x-tp-memory-profiling-v0-5.log": dict(
        state="allocating_kv_cache",
        ready=False,
        captures=[],
        crash=None,
    ),
    # Both ranks finish capturing (V1's runner: piecewise), then rank 1's worker dies in
    # the sampler's warmup; the traceback is cut before its exception line.
    "vllm-0.8.x-tp2-crash-after-capture-workerproc-1.log": dict(
        state="crashed",
        ready=False,
        captures=[("piecewise", None, None, True)],
        capture_seconds=[113.0],
        crash=["WorkerProc hit an exception"],
        crash_phase="warming_up",
    ),
    "vllm-unknown-apiserver-serving-stats-2.log": dict(
        state="serving",
        ready=False,
        captures=[],
        crash=None,
        tput=(5, 1242.7, 1242.7, 1055.3),
    ),
    # The API server's own traceback: the root cause was above the excerpt.
    "vllm-unknown-crash-apiserver-engine-init-failed-3.log": dict(
        state="crashed",
        ready=False,
        captures=[],
        crash=["RuntimeError", "Engine core initialization failed", "Failed core proc(s)"],
    ),
    # A cudagraph mode lowered to PIECEWISE, then the bar at 9/67.
    "vllm-unknown-dp-tp-ep-capture-piecewise-1.log": dict(
        state="capturing_graphs",
        ready=False,
        captures=[("piecewise", 9, 67, False)],
        crash=None,
        overrides={"cudagraph_mode": "PIECEWISE"},
        changes=["CUDA graphs PIECEWISE only"],
    ),
    # Weights, torch.compile (19.69 s), KV cache, both bars to the end: warmup goes on.
    "vllm-unknown-enginecore-dp0-compile-capture-3.log": dict(
        state="warming_up",
        ready=False,
        captures=[("piecewise", 51, 51, True), ("decode", 35, 35, True)],
        crash=None,
        kv_tokens=1587648,
        compile=("miss", 19.69),
    ),
    # CUDA graph memory estimated, KV cache sized, capture sizes capped 512 -> 352.
    "vllm-unknown-enginecore-dp0-kvcache-autotune-1.log": dict(
        state="allocating_kv_cache",
        ready=False,
        captures=[],
        crash=None,
        kv_tokens=188640,
        overrides={"max_cudagraph_capture_size": 352},
        changes=["CUDA graphs for batches up to 352 only"],
    ),
    "vllm-unknown-tp-worker-weights-compile-1.log": dict(
        state="compiling",
        ready=False,
        captures=[],
        crash=None,
        weights=(9, 9),
        weights_seconds=29.0,  # the shard bar's own clock (00:29) beats "took 24.84 seconds"
    ),
    "vllm-unknown-tp2-spec-mtp-cudagraph-mode-1.log": dict(
        state="allocating_kv_cache",
        ready=False,
        captures=[],
        crash=None,
        overrides={"cudagraph_mode": "PIECEWISE"},
        changes=["CUDA graphs PIECEWISE only"],
    ),
    # The encoder cache's profiling run, then torch.compile loaded from its cache.
    "vllm-unknown-tp2-torch-compile-aot-cache-1.log": dict(
        state="compiling",
        ready=False,
        captures=[],
        crash=None,
        compile=("hit", 14.85),  # loaded in 5.684 s; torch.compile took 14.85 s in total
    ),
    # The decode FULL bar to 67/67 (a worker's line glued after its 65/67 frame), then
    # two ranks' "finished in 38 secs".
    "vllm-unknown-tp4-ep-capture-full-glued-2.log": dict(
        state="warming_up",
        ready=False,
        captures=[("decode", 67, 67, True)],
        capture_seconds=[38.0],
        crash=None,
    ),
    "vllm-v1-0.9-serving-stats-1.log": dict(
        state="serving",
        ready=False,
        captures=[],
        crash=None,
        tput=(1, 29.2, 29.2, 29.2),
    ),
}
