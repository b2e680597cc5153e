"""The publishers' REST retries, read from curl's stderr."""

from __future__ import annotations

import gzip
from pathlib import Path

from waku_shadow import layout


def publish_retries(run_dir: Path) -> dict[str, int]:
    """Per publishing host, how many REST publishes curl had to retry (its stderr says so)."""
    retries = {}
    for stderr in sorted((run_dir / layout.LOGS).glob("*/curl.*.stderr.gz")):
        with gzip.open(stderr, "rt", errors="replace") as handle:
            count = handle.read().count("Will retry")
        if count:
            host = stderr.parent.name
            retries[host] = retries.get(host, 0) + count
    return retries
