"""tqdm's frames, spelled as tqdm spells them when stderr is not a terminal.

A redirected tqdm has no terminal width, so the bar is 10 cells of Unicode
eighth blocks; rates under 1 it/s flip to s/it. SGLang's weight loader uses its
own bar_format ("... 25% Completed | 1/4 [...]"); the graph captures use the
default one ("...:  33%|███▎      | 1/3 [...]").
"""

from __future__ import annotations

_BLOCKS = " ▏▎▍▌▋▊▉"
_WIDTH = 10


def bar(desc: str, n: int, total: int, elapsed: float) -> str:
    """Default format: `desc:  33%|███▎      | 1/3 [00:01<00:02,  1.50s/it]`."""
    head = f"{desc}: " if desc else ""
    return f"{head}{_pct(n, total)}|{_cells(n, total)}| {n}/{total} {_stats(n, total, elapsed)}"


def loading(desc: str, n: int, total: int, elapsed: float) -> str:
    """SGLang's loader format: `desc:  25% Completed | 1/4 [00:00<00:01,  2.03it/s]`."""
    return f"{desc}: {_pct(n, total)} Completed | {n}/{total} {_stats(n, total, elapsed)}"


def _pct(n: int, total: int) -> str:
    return f"{100 * n / total:3.0f}%"


def _cells(n: int, total: int) -> str:
    full, part = divmod(int(n / total * _WIDTH * 8), 8)
    text = "█" * full + (_BLOCKS[part] if full < _WIDTH else "")
    return text.ljust(_WIDTH)


def _stats(n: int, total: int, elapsed: float) -> str:
    if n == 0 or elapsed <= 0:
        return f"[{_interval(elapsed)}<?, ?it/s]"
    rate = n / elapsed
    speed = f"{rate:5.2f}it/s" if rate >= 1 else f"{1 / rate:5.2f}s/it"
    return f"[{_interval(elapsed)}<{_interval((total - n) / rate)}, {speed}]"


def _interval(seconds: float) -> str:
    m, s = divmod(int(seconds), 60)
    h, m = divmod(m, 60)
    return f"{h:d}:{m:02d}:{s:02d}" if h else f"{m:02d}:{s:02d}"
