"""Per-host restart history: which command ran when, and how it went.

One JSON-lines file per host, `$XDG_STATE_HOME/sgwatch/history/HOST.jsonl`
(default `~/.local/state`), appended to: a launch writes a record, and its outcome
(ready with warmup seconds, later tok/s, or crashed with the cause) another with
the same id; reading folds them into one Run. Past MAX_BYTES the file keeps only
its newer half (the newest ~1,000 runs): it stays bounded on a host restarted
every few minutes for weeks.
Secrets never reach the file: the command is stored masked (launch.masked),
the environment not at all.
"""

from __future__ import annotations

import json
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

from platformdirs.unix import Unix

from sgwatch.core.cmdline import MASK, LaunchCommand, masked, parse
from sgwatch.core.eta import Earlier

_UNSAFE = re.compile(r"[^A-Za-z0-9._@-]")
MAX_BYTES = 1 << 20  # a run's records take ~0.5-1 KiB


def default_folder() -> Path:
    return Unix("sgwatch").user_state_path / "history"  # $XDG_STATE_HOME, else ~/.local/state


@dataclass(slots=True)
class Run:
    id: str
    host: str
    time: float  # launch, seconds since the epoch
    argv: list[str]  # masked
    cwd: str | None = None
    pid: int | None = None
    outcome: str = "launched"  # launched | ready | crashed | failed
    warmup_seconds: float | None = None
    tok_s: float | None = None
    note: str = ""  # the crash or failure cause
    log: str | None = None  # where it wrote, on the host
    extra: dict = field(default_factory=dict)  # fields a newer sgwatch wrote

    @property
    def command(self) -> LaunchCommand:
        return parse(self.argv)


class History:
    def __init__(self, host: str, folder: Path | None = None) -> None:
        self.host = host
        self.path = (folder or default_folder()) / f"{_UNSAFE.sub('_', host)}.jsonl"

    def launched(
        self, cmd: LaunchCommand, cwd: str | None, pid: int | None, log: str | None = None
    ) -> str:
        """Record a launch; returns the id its outcome is recorded under."""
        run_id = f"{time.time():.6f}-{pid}"
        argv = masked(cmd).argv
        rec = {"id": run_id, "time": time.time(), "argv": argv, "cwd": cwd, "pid": pid}
        self._append({**rec, "log": log} if log else rec)
        return run_id

    def logs(self) -> list[str]:
        """The logs the runs wrote, newest first, each once."""
        return list(dict.fromkeys(r.log for r in reversed(self.runs()) if r.log))

    def outcome(self, run_id: str, outcome: str, **fields: object) -> None:
        self._append({"id": run_id, "outcome": outcome, **fields})

    def note(self, run_id: str, **fields: object) -> None:
        """Facts about a run that leave its outcome as it is (bench results, warmup detail)."""
        self._append({"id": run_id, **fields})

    def runs(self) -> list[Run]:
        """Every run, oldest first; unreadable lines are skipped, not fatal."""
        folded: dict[str, dict] = {}
        try:
            text = self.path.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return []
        for line in text.splitlines():
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if isinstance(rec, dict) and isinstance(rec.get("id"), str):
                folded.setdefault(rec["id"], {}).update(rec)
        runs = []
        known = set(Run.__slots__) - {"extra"}
        for rec in folded.values():
            if "argv" not in rec or "time" not in rec:
                continue  # an outcome whose launch line was lost
            extra = {k: v for k, v in rec.items() if k not in known}
            base = {k: v for k, v in rec.items() if k in known}
            runs.append(Run(host=self.host, extra=extra, **base))
        return sorted(runs, key=lambda r: r.time)

    def last_good(self) -> Run | None:
        """The newest run that reached ready."""
        return next((r for r in reversed(self.runs()) if r.outcome == "ready"), None)

    def _append(self, rec: dict) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as f:
            f.write(json.dumps(rec, separators=(",", ":")) + "\n")
            size = f.tell()
        if size > MAX_BYTES:
            self._trim()

    def _trim(self) -> None:
        """Keep the newer half, from a line start, replacing the file at once (a reader
        sees the old file or the new). A run cut in two keeps its outcome lines without
        their launch line: runs() leaves it out."""
        data = self.path.read_bytes()
        cut = data.find(b"\n", len(data) - MAX_BYTES // 2) + 1
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_bytes(data[cut:])
        os.replace(tmp, self.path)


# What makes two runs comparable for timing, kept with each ready outcome: the same
# model, parallelism and engine release (a run that does not say is not ruled out).
IDENTITY = ("model", "parallel", "engine_version")


def flag_set(cmd: LaunchCommand) -> frozenset[str]:
    """A command's flags as `name=values` items, for counting how far two commands are."""
    return frozenset(f"{f.name}={' '.join(f.values)}" for f in masked(cmd).flags)


def earlier_runs(
    runs: list[Run], identity: dict[str, object], leave_out: str | None
) -> list[Earlier]:
    """The runs that reached ready (a warmup time), of the same identity (IDENTITY
    keys both sides know must agree), oldest first, as core/eta.py reads them."""
    out = []
    for r in runs:
        if r.id == leave_out or r.warmup_seconds is None:
            continue
        known = ((k, r.extra.get(k), identity.get(k)) for k in IDENTITY)
        if any(a is not None and b is not None and a != b for _, a, b in known):
            continue
        phases = r.extra.get("phases")
        phases = (
            {k: v for k, v in phases.items() if isinstance(v, int | float)}
            if isinstance(phases, dict)
            else {}
        )
        cache = r.extra.get("compile_cache")
        out.append(Earlier(flag_set(r.command), phases, r.warmup_seconds, cache))
    return out


def restore(stored: LaunchCommand, current: LaunchCommand) -> LaunchCommand:
    """A stored (masked) command with its masked values taken from `current`.

    History never holds a secret, so rolling back to a stored command needs the
    running command's value of each masked flag; ValueError names one it lacks.
    """
    have = {f.name: f.values for f in current.flags}
    flags = []
    for f in stored.flags:
        if MASK in f.values:
            if f.name not in have:
                raise ValueError(f"{f.name} is masked in the history and not in the command now")
            f = type(f)(f.name, have[f.name], f.inline)
        flags.append(f)
    if any(t.endswith("=" + MASK) for t in stored.prefix):
        raise ValueError("the stored command's environment is masked")
    return type(stored)(stored.prefix, stored.program, stored.positional, tuple(flags))
