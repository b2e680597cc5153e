"""What a run's event loops ask the OS: a completed run folder rerun with Shadow's strace logging.

Every node's ``epoll_wait`` is counted by its timeout (0: it cannot block; positive or infinite: it
may wait), whether it found a ready descriptor, what the same node's previous select found, and
whether the node started watching a descriptor (``epoll_ctl`` ADD or MOD) since then. A select
that cannot block and follows one that found events is what nwaku patch 0026 skips; the census
shows how often such a select found something, and how often what it found was a peer's end of
stream (the next ``recvfrom`` returned 0).
"""

from __future__ import annotations

import gzip
import re
import shutil
from collections import Counter
from pathlib import Path

import pandas as pd
import yaml

from waku_shadow import layout
from waku_shadow.cost import profile
from waku_shadow.errors import RunError
from waku_shadow.run import guard

CENSUS_TABLE = "selects.csv"
STRACE_LINE = re.compile(r"^\S+ \[tid \d+\] (?P<name>\w+)\((?P<args>.*)\) = (?P<result>.*)$")
EPOLL_CTL_DEL = "2"
COLUMNS = ["timeout", "found", "previous_found", "watched_since", "end_of_stream_next", "selects"]


def record(run_dir: Path, out: Path, shadow_binary: str, memory_floor_bytes: int, preload: str | None = None) -> Path:
    """Rerun ``run_dir``'s simulation in ``out/run`` with Shadow's deterministic strace logging;
    return the folder of its hosts. The run folder itself is left as it is."""
    scratch = profile.rerun_folder(run_dir, out)
    config = yaml.safe_load((scratch / layout.SHADOW_CONFIG).read_text())
    config.setdefault("experimental", {})["strace_logging_mode"] = "deterministic"
    (scratch / layout.SHADOW_CONFIG).write_text(yaml.safe_dump(config, sort_keys=False))
    guard.run(shadow_binary, scratch, memory_floor_bytes, preload=preload)
    return scratch / layout.SHADOW_DATA / "hosts"


def strace_files(hosts: Path) -> list[Path]:
    files = sorted([*hosts.glob("*/*.strace"), *hosts.glob("*/*.strace.gz")])
    if not files:
        raise RunError(f"no strace files under {hosts}: was the run made with strace_logging_mode deterministic?")
    return files


def strace_lines(path: Path):
    with (gzip.open(path, "rt", errors="replace") if path.suffix == ".gz" else path.open(errors="replace")) as text:
        yield from text


def census(hosts: Path) -> pd.DataFrame:
    """One row per kind of select (see the module's doc) with how many there were in the run."""
    counts: Counter[tuple] = Counter()
    for path in strace_files(hosts):
        previous_found = "none"
        watched_since = False
        pending = None  # a select that cannot block and found something, until the next read tells what
        for line in strace_lines(path):
            match = STRACE_LINE.match(line)
            if match is None or match["result"] == "<blocked>":
                continue
            name, args, result = match["name"], match["args"], match["result"].split()[0]
            if name == "recvfrom" and pending is not None:
                counts[(*pending, result == "0")] += 1
                pending = None
            elif name == "epoll_ctl":
                watched_since |= args.split(",")[1].strip() != EPOLL_CTL_DEL
            elif name == "epoll_wait":
                if pending is not None:
                    counts[(*pending, False)] += 1
                    pending = None
                timeout = args.rsplit(",", 1)[1].strip()
                kind = "0" if timeout == "0" else "infinite" if timeout == "-1" else "positive"
                found = result != "0"
                key = (kind, found, previous_found, watched_since)
                if kind == "0" and found:
                    pending = key
                else:
                    counts[(*key, False)] += 1
                previous_found = "events" if found else "nothing"
                watched_since = False
        if pending is not None:
            counts[(*pending, False)] += 1
    return pd.DataFrame([(*key, n) for key, n in sorted(counts.items())], columns=COLUMNS)


def summary(table: pd.DataFrame) -> dict[str, int]:
    """The counts patch 0026 is about: selects that cannot block after one that found events, what
    they found, and those found without a new watch (of which, a peer's end of stream)."""
    after_events = table[(table["timeout"] == "0") & (table["previous_found"] == "events")]
    found = after_events[after_events["found"]]
    unwatched = found[~found["watched_since"]]
    return {
        "selects": int(table["selects"].sum()),
        "cannot_block_after_events": int(after_events["selects"].sum()),
        "of_which_found_nothing": int(after_events.loc[~after_events["found"], "selects"].sum()),
        "found_without_a_new_watch": int(unwatched["selects"].sum()),
        "of_which_end_of_stream": int(unwatched.loc[unwatched["end_of_stream_next"], "selects"].sum()),
    }


SUMMARY_LABELS = {
    "selects": "selects (epoll_wait) in the run",
    "cannot_block_after_events": "could not block, after a select that found events",
    "of_which_found_nothing": "of those, found nothing",
    "found_without_a_new_watch": "found something with no descriptor newly watched",
    "of_which_end_of_stream": "of those, a peer's end of stream",
}


def comparison(census_dirs: list[Path]) -> str | None:
    """The summaries of several censuses (folders holding selects.csv) side by side, one column each."""
    if not census_dirs:
        return None
    counts = {directory.name: summary(pd.read_csv(directory / CENSUS_TABLE)) for directory in census_dirs}
    lines = ["| | " + " | ".join(f"`{name}`" for name in counts) + " |", "|---|" + "---:|" * len(counts)]
    lines += [f"| {label} | " + " | ".join(f"{c[key]:,}" for c in counts.values()) + " |"
              for key, label in SUMMARY_LABELS.items()]
    return "\n".join(lines)


def census_run(run_dir: Path, out: Path, shadow_binary: str, memory_floor_bytes: int,
               keep: bool = False, preload: str | None = None) -> pd.DataFrame:
    """Rerun ``run_dir`` with strace logging into ``out``, write its census there and return it.
    Unless ``keep``, the rerun's folder is removed afterwards. ``preload``: Shadow's malloc, as
    guard.run takes it."""
    table = census(record(run_dir, out, shadow_binary, memory_floor_bytes, preload))
    table.to_csv(out / CENSUS_TABLE, index=False)
    if not keep:
        shutil.rmtree(out / "run")
    return table
