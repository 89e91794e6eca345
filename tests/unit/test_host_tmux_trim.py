"""The tmux follower's piped file is trimmed as it is read (host/tmux.py: segments made
by the pipe's command, unlinked by the reader once read): the pipe's real command fed
numbered lines in odd-sized chunks, read as they come; every line once, in order, and
what is left on disk under one segment already read plus what is not read yet."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

from sgwatch.remote.host.tmux import Piped

TRIM = 1000
LINES = [b"n%d %s\r\n" % (i, b"x" * (i % 37)) for i in range(1, 3001)]  # ~80 KB


def on_disk(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.glob("out.*"))


def read_until(piped: Piped, got: bytearray, size: int) -> None:
    deadline = time.monotonic() + 10
    while len(got) < size:
        assert time.monotonic() < deadline, f"{len(got)} of {size} bytes read"
        data = piped.read()
        got += data
        if not data:
            time.sleep(0.01)


def test_lines_piped_across_many_trims_are_read_once_in_order_and_the_file_stays_small():
    piped = Piped(SimpleNamespace(tmux=["false"], pane="%0"), trim=TRIM)
    folder = Path(piped.dir)
    writer = subprocess.Popen([sys.executable, str(folder / "pipe.py")], stdin=subprocess.PIPE)
    try:
        data, got, written, most = b"".join(LINES), bytearray(), 0, 0
        sizes = [1, 7, 333, 999, 1000, 1001, 2500, 64]
        for k, n in enumerate(sizes * 40):
            chunk = data[written : written + n]
            writer.stdin.write(chunk)
            writer.stdin.flush()
            written += len(chunk)
            if k % 3 == 0:  # the reader catches up now and then, mid-segment or not
                read_until(piped, got, written)
                most = max(most, on_disk(folder))
                assert on_disk(folder) <= TRIM  # all read: at most the segment being read
        writer.stdin.write(data[written:])
        writer.stdin.close()  # the pipe closed (by the user): the command marks it
        deadline = time.monotonic() + 10
        while piped.ours():
            assert time.monotonic() < deadline
            time.sleep(0.01)
        while data := piped.read():  # what was written before the close
            got += data
        assert bytes(got) == b"".join(LINES)  # none lost, none twice, in order
        assert piped.n >= len(got) // TRIM - 1  # trimmed all along
        assert sorted(p.name for p in folder.glob("out.*")) == [f"out.{piped.n}"]
        assert 0 < most <= TRIM
    finally:
        piped.close()  # removes the folder: the command, waiting on it, ends
        assert writer.wait(5) == 0
    assert not folder.exists()
