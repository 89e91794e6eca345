"""tqdm's frames, drawn by tqdm itself as it draws them when stderr is not a terminal.

A redirected tqdm has no terminal width, so the bar is 10 cells of Unicode
eighth blocks; rates under 1 it/s flip to s/it. The graph captures use the
default format ("...:  33%|███▎      | 1/3 [...]"); SGLang's and vLLM's weight
loaders their own bar_format ("... 25% Completed | 1/4 [...]").
"""

from __future__ import annotations

from tqdm import tqdm

# The loaders' bar_format, without the newline SGLang's ends with (the writer adds it).
_LOADING = (
    "{desc}: {percentage:3.0f}% Completed | {n_fmt}/{total_fmt} [{elapsed}<{remaining}, "
    "{rate_fmt}{postfix}]"
)


def bar(desc: str, n: int, total: int, elapsed: float) -> str:
    """Default format: `desc:  33%|███▎      | 1/3 [00:01<00:03,  1.50s/it]`."""
    return tqdm.format_meter(n, total, elapsed, prefix=desc)


def loading(desc: str, n: int, total: int, elapsed: float) -> str:
    """The loaders' format: `desc:  25% Completed | 1/4 [00:00<00:01,  2.03it/s]`."""
    return tqdm.format_meter(n, total, elapsed, prefix=desc, bar_format=_LOADING)
