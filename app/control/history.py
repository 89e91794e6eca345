"""Per-host restart history: which command ran when, and how it went.

One JSON-lines file per host, `$XDG_STATE_HOME/sgwatch/history/HOST.jsonl`
(default `~/.local/state`), appended to: a launch writes a record, and its outcome
(ready with warmup seconds, later tok/s, or crashed with the cause) another with
the same id; reading folds them into one Run. Past MAX_BYTES the file keeps only
its newer half (the newest ~1,000 runs): it stays bounded on a host restarted
every few minutes for weeks. A History reads only what was appended since it last
read: a dashboard asks at every restart, and parsing the whole file each time (about
1,400-1,900 runs at the bound) held its event loop (0.14 s on a quiet machine) and made
a peak of 8 MB of small objects.
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


@dataclass(frozen=True, slots=True)
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
    @classmethod
    def kept(cls, host: str) -> History:
        """The host's History in the default folder, one per process: a long-lived one
        (the MCP server) reads each file once, then only what is appended."""
        history = cls(host)
        return _KEPT.setdefault((history.path, host), history)

    def __init__(self, host: str, folder: Path | None = None) -> None:
        self.host = host
        self.path = (folder or default_folder()) / f"{_UNSAFE.sub('_', host)}.jsonl"
        self._file: tuple[int, int] | None = None  # (device, inode) of the file read
        self._read_to = 0  # its bytes folded so far (whole lines)
        self._tail = b""  # the last of them, to know the file again
        self._runs: dict[str, Run] = {}
        self._orphans: dict[str, dict] = {}  # lines of an id whose launch line is not read
        self._strings: dict[str, str] = {}  # one copy of each string the records repeat
        self._earlier: tuple[tuple, list[Earlier]] | None = None  # (asked for, them)

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
        self._read_new()
        return sorted(self._runs.values(), key=lambda r: r.time)

    def earlier(self, identity: dict[str, object], leave_out: str | None) -> list[Earlier]:
        """earlier_runs() of this history, read and worked out again only for another
        run (identity, the run left out) or once this History recorded something: the
        ETA asks at each refresh of a warmup, a pod's probe check at each batch of lines."""
        key = (tuple(identity.items()), leave_out)
        if self._earlier is None or self._earlier[0] != key:
            self._earlier = (key, earlier_runs(self.runs(), identity, leave_out))
        return self._earlier[1]

    def _read_new(self) -> None:
        """Fold the lines appended since the last read; all of them again when the file
        was replaced (a trim, here or by another sgwatch) or is gone."""
        try:
            with self.path.open("rb") as f:
                st = os.fstat(f.fileno())
                file, back = (st.st_dev, st.st_ino), len(self._tail)
                same = file == self._file and st.st_size >= self._read_to
                if same:
                    f.seek(self._read_to - back)
                    data = f.read()
                # the inode of a file replaced twice since can be the first one's again:
                # the bytes last read tell
                if same and data.startswith(self._tail):
                    data = data[back:]
                else:
                    self._forget(file)
                    f.seek(0)
                    data = f.read()
        except FileNotFoundError:
            self._forget(None)
            return
        whole = data.rfind(b"\n") + 1  # a line still being written waits for its end
        self._read_to += whole
        self._tail = (self._tail + data[:whole])[-64:]
        fresh: dict[str, dict] = {}  # id -> its record, for each run these lines touch
        for line in data[:whole].decode("utf-8", errors="replace").splitlines():
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if isinstance(rec, dict) and isinstance(rec.get("id"), str):
                run_id = rec["id"]
                if run_id not in fresh:
                    fresh[run_id] = self._orphans.pop(run_id, None) or _record(
                        self._runs.get(run_id)
                    )
                fresh[run_id].update(self._shared(rec))
        for run_id, rec in fresh.items():
            run = _run(self.host, rec)
            if run is None:
                self._orphans[run_id] = rec
            else:
                self._runs[run_id] = run

    def _forget(self, file: tuple[int, int] | None) -> None:
        self._file, self._read_to, self._tail = file, 0, b""
        self._runs, self._orphans, self._strings = {}, {}, {}

    def _shared(self, value):
        """`value` with each string (dict keys, argv tokens, paths, models) one copy
        for every record: a run's lines repeat nearly all of the one before."""
        if isinstance(value, str):
            return self._strings.setdefault(value, value)
        if isinstance(value, list):
            return [self._shared(v) for v in value]
        if isinstance(value, dict):
            return {self._shared(k): self._shared(v) for k, v in value.items()}
        return value

    def last_good(self) -> Run | None:
        """The newest run that reached ready."""
        return next((r for r in reversed(self.runs()) if r.outcome == "ready"), None)

    def _append(self, rec: dict) -> None:
        self._earlier = None  # a run recorded, or its outcome
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


_KNOWN = frozenset(Run.__slots__) - {"extra", "host"}


def _record(run: Run | None) -> dict:
    """What a run was folded from: its fields, and those this sgwatch does not know."""
    if run is None:
        return {}
    return {**{k: getattr(run, k) for k in _KNOWN}, **run.extra}


def _run(host: str, rec: dict) -> Run | None:
    """A run from its folded records; None for an outcome whose launch line was lost."""
    if "argv" not in rec or "time" not in rec:
        return None
    extra = {k: v for k, v in rec.items() if k not in _KNOWN}
    base = {k: v for k, v in rec.items() if k in _KNOWN}
    return Run(host=host, extra=extra, **base)


_KEPT: dict[tuple[Path, str], History] = {}


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
    out, flags = [], {}  # a command's flags worked out once: most runs repeat a few
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
        argv = tuple(r.argv)
        if argv not in flags:
            flags[argv] = flag_set(r.command)
        out.append(Earlier(flags[argv], phases, r.warmup_seconds, cache))
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
