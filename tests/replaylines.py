"""Lines of a log read as `sgwatch replay` reads a file: one ingest, then the summary."""

from sgwatch.cli.replay import server_changes
from sgwatch.core.summary import Summary, summarize
from sgwatch.live.ingest import LogIngest


def ingested(lines: list[str]) -> LogIngest:
    ingest = LogIngest()
    ingest.feed("\n".join(lines).encode() + b"\n")
    ingest.flush()
    return ingest


def replay(lines: list[str]) -> Summary:
    state = ingested(lines).state
    return summarize(state, server_changes(state))
