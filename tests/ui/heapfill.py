"""Free space left inside the C heap, as a burst of large reads leaves it (test_heap.py)."""


def rss_mb() -> float:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS")) / 1024


def fragmented() -> list[bytearray]:
    """30 MB freed inside the heap: 28 KiB blocks (under the mmap threshold the
    dashboard sets, so from malloc's heap), each followed by a small one that stays
    (returned), and a last block that stays, so that none of the freed space is at the
    heap's top, which malloc gives back by itself. (In a process that has run for a
    while the small ones may fill holes lower down instead; the last one still comes
    from the top, above the freed blocks.)"""
    blocks, kept = [], []
    for _ in range(1100):
        blocks.append(bytearray(28 << 10))
        kept.append(bytearray(1000))
    kept.append(bytearray(28 << 10))
    return kept
