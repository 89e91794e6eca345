"""Simulated SGLang and vLLM servers and an nvidia-smi stand-in, for the demo and the tests.

`sgwatch sim --model-path ... --tp 2 ...` (or `python -m sgwatch.sim ...`) runs
one process that takes SGLang's own flags, writes SGLang's log lines with
realistic timing, serves SGLang's HTTP endpoints and dies the way SGLang dies.
Every line it prints follows a format seen in real logs or documented for a
release (docs/design/log-formats.md); `--sim-format` picks the release family.
`python -m sgwatch.sim vllm serve MODEL ...` does the same for vLLM 0.11.0.

common/ holds what both share (clock, process, GPU state and the nvidia-smi
stand-in, HTTP, scheduler, metrics, tqdm frames); sglang/ and vllm/ each imitate
one engine over it and never import each other. engine.py is the simulator's
adapter for sgwatch's engines registry; demo.py is `sgwatch --demo`. See
docs/design/simulator.md.
"""
