"""A simulated SGLang server and nvidia-smi stand-in, for the demo and the tests.

`sgwatch sim --model-path ... --tp 2 ...` (or `python -m sgwatch.sim ...`) runs
one process that takes SGLang's own flags, writes SGLang's log lines with
realistic timing, serves SGLang's HTTP endpoints and dies the way SGLang dies.
Every line it prints follows a format seen in real logs or documented for a
release (shared engines.md); `--sim-format` picks the release family.
"""
