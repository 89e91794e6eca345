"""The first part of a long log's past, read in a process of its own (live/pastsplit.py).

    python -m sgwatch.live.pastworker FD

FD: a file, open for reading, that the session writes the part into as it
arrives. Stdin brings the part's size in bytes once it is known (a line); the
worker reads up to it, then writes its LogIngest, pickled, on stdout. Stdin's
end before the size (the session is gone) ends the worker.
"""

from __future__ import annotations

import os
import pickle
import select
import sys

from sgwatch.live.ingest import LogIngest

BLOCK = 1 << 20
WAIT_S = 0.01  # at the file's end: how long to wait for more, or the size


def main(fd: int) -> int:
    ingest, got, size = LogIngest(), 0, None
    stdin = sys.stdin.buffer
    while size is None or got < size:
        data = os.read(fd, BLOCK if size is None else min(BLOCK, size - got))
        if data:
            got += len(data)
            ingest.feed(data)
        elif size is None and select.select([stdin], [], [], WAIT_S)[0]:
            line = stdin.readline()
            if not line:
                return 1  # the session ended
            size = int(line)
        elif size is not None:
            return 1  # the file ends short of the size
    sys.stdout.buffer.write(pickle.dumps(ingest, pickle.HIGHEST_PROTOCOL))
    return 0


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1])))
