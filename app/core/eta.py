"""Estimates of time left: for one progress bar, and for the whole warmup to ready.

A bar's first items are often its slowest (the first shape compiles, the first
graph allocates its pool), so the rate comes from the recent items, not from the
bar's whole elapsed time. The warmup's time to ready comes from earlier runs of the
same model on the same host, nearest command first, phase by phase.
Pure: no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import fmean, median

from sgwatch.core import events as ev

# The fit takes at least this many frames: tqdm's elapsed clock ticks in whole
# seconds, so two frames alone are mostly rounding.
MIN_POINTS = 4


def bar_rate(marks: Sequence[tuple[float, int]]) -> float | None:
    """Items a second over the bar's recent items. `marks`: (tqdm elapsed seconds,
    items done) of its frames, oldest first, one per item count. The rate is the
    least-squares slope over the frames of the latter half of the items done (at
    least MIN_POINTS of them), leaving out the first item once a second one is done:
    the fit evens out the clock's whole-second ticks that a two-point rate inherits."""
    if not marks:
        return None
    n1 = marks[-1][1]
    if n1 <= 0:
        return None
    floor = 1 if n1 >= 2 else 0  # the first item pays the bar's start-up costs
    start = len(marks) - 1
    while (
        start > 0
        and marks[start - 1][1] >= floor
        and (marks[start - 1][1] >= n1 // 2 or len(marks) - start < MIN_POINTS)
    ):
        start -= 1
    window = marks[start:]
    if len(window) < 2:
        t1 = marks[-1][0]
        return n1 / t1 if t1 > 0 else None  # one item: the bar's whole time
    mean_t = fmean(t for t, _ in window)
    mean_n = fmean(n for _, n in window)
    spread = sum((n - mean_n) ** 2 for _, n in window)
    slope = sum((n - mean_n) * (t - mean_t) for t, n in window) / spread  # seconds an item
    if slope <= 0:  # every frame within one tick: the whole bar's rate
        t1 = marks[-1][0]
        return n1 / t1 if t1 > 0 else None
    return 1.0 / slope


def bar_eta(marks: Sequence[tuple[float, int]], total: int | None) -> float | None:
    """Seconds left on a bar at its recent rate; None before there is one, and while
    only the first item is done (it pays the bar's start-up costs: a rate from it
    alone has read 3x too long)."""
    if total is None or not marks or marks[-1][1] < 2:
        return None
    rate = bar_rate(marks)
    left = total - marks[-1][1]
    if rate is None or left < 0:
        return None
    return left / rate


@dataclass(frozen=True, slots=True)
class Earlier:
    """An earlier run that reached ready: its flags (name=values tokens), the seconds
    each phase took, and its whole warmup."""

    flags: frozenset[str]
    phases: Mapping[str, float]
    warmup_s: float
    compile_cache: str | None = None  # "hit" | "miss", when its torch.compile said


@dataclass(frozen=True, slots=True)
class ReadyEta:
    seconds: float  # left until ready
    runs: int  # the earlier runs it is built from
    flags_apart: int  # how many flags their command differs by from this one (0: the same)
    cache_hit: bool = False  # the compile is timed as this run's compile cache hit

    @property
    def basis(self) -> str:
        """What the estimate is built from, in words."""
        runs = "1 earlier run" if self.runs == 1 else f"{self.runs} earlier runs"
        hit = ", compile cache hit" if self.cache_hit else ""
        if self.flags_apart == 0:
            return f"from {runs} of this command{hit}"
        s = "" if self.flags_apart == 1 else "s"
        return f"from {runs} of this model ({self.flags_apart} flag{s} apart){hit}"


def flags_apart(a: frozenset[str], b: frozenset[str]) -> int:
    """How many flags two commands differ by: added, removed or with another value
    (items are `name=values`: a changed value is one flag, not two items)."""
    return len({item.split("=", 1)[0] for item in a ^ b})


def nearest(flags: frozenset[str], earlier: Sequence[Earlier]) -> list[Earlier]:
    """The earlier runs whose command differs least from `flags` (newest last)."""
    if not earlier:
        return []
    apart = [flags_apart(flags, e.flags) for e in earlier]
    best = min(apart)
    return [e for e, d in zip(earlier, apart, strict=True) if d == best]


def ready_eta(
    flags: frozenset[str],
    earlier: Sequence[Earlier],
    spent: Mapping[str, float],
    current: str,
    compile_cache: str | None = None,
) -> ReadyEta | None:
    """Seconds left until ready for a run with `flags`, now in phase `current`, having
    spent `spent` seconds in each phase so far (the current one included).

    The nearest command's runs say which phases come and how long each takes (their
    median): a phase the flag diff adds or removes is there or not as it was for
    them. A phase this run entered that they lacked is timed by the nearest run of
    the same model that had it. Phases already behind the run count nothing.
    `compile_cache`: this run's torch.compile said its graphs came from the cache
    ("hit") or not ("miss"): the compile is timed by earlier runs of that outcome; a
    hit that none had is over (its graphs are loaded by the time it says so)."""
    near = nearest(flags, earlier)
    rank = ev.PHASE_RANK.get(current)
    if not near or rank is None:
        return None
    if not any(e.phases for e in near):  # records without phases: the whole warmup
        left = max(0.0, median(e.warmup_s for e in near) - sum(spent.values()))
        return ReadyEta(left, len(near), flags_apart(flags, near[-1].flags))
    names = {p for e in near for p in e.phases} | {p for p in spent if p in ev.PHASE_RANK}
    expected: dict[int, float] = {}  # by rank: capture and compilation share theirs
    hit = False
    for name in names:
        if ev.PHASE_RANK.get(name, -1) < rank:
            continue
        took = [e.phases[name] for e in near if name in e.phases]
        if name == ev.COMPILING and compile_cache is not None:
            took, hit = _compile_took(flags, earlier, spent, compile_cache, took)
        if not took:  # entered now, absent from the nearest runs: the nearest that had it
            others = nearest(flags, [e for e in earlier if name in e.phases])
            took = [e.phases[name] for e in others]
        r = ev.PHASE_RANK[name]
        expected[r] = expected.get(r, 0.0) + (median(took) if took else 0.0)
    # Time spent in a rank counts against it whole: a log's boundaries between capture
    # and compilation move (an untimed bar's start is estimated), their sum does not.
    done: dict[int, float] = {}
    for name, seconds in spent.items():
        if (r := ev.PHASE_RANK.get(name)) is not None:
            done[r] = done.get(r, 0.0) + seconds
    left = sum(max(0.0, t - done.get(r, 0.0)) for r, t in expected.items())
    return ReadyEta(left, len(near), flags_apart(flags, near[-1].flags), hit)


def _compile_took(
    flags: frozenset[str],
    earlier: Sequence[Earlier],
    spent: Mapping[str, float],
    cache: str,
    took: list[float],
) -> tuple[list[float], bool]:
    """The compile times to go by once this run's cache outcome is known, and whether
    they are a hit's: the nearest runs with the same outcome; for a hit none had, the
    time spent so far (the hit line comes when the graphs are loaded)."""
    same = nearest(
        flags, [e for e in earlier if e.compile_cache == cache and ev.COMPILING in e.phases]
    )
    if same:
        return [e.phases[ev.COMPILING] for e in same], cache == "hit"
    if cache == "hit":
        return [spent.get(ev.COMPILING, 0.0)], True
    return took, False
