"""Whether a run's nodes fit under this machine's open-files limit: Shadow holds descriptors for each
managed process, and a run past the limit panics ("Too many open files") at simulated time 0."""

from __future__ import annotations

import os
import resource

from waku_shadow.configuration.study import Study
from waku_shadow.errors import RunError

# Shadow's descriptors per node, by shadow.few_descriptors_per_process, and its own besides
# (docs/performance.md, "Open files"). Held through a 400-node run: 2,015 without the switch, 410 with
# it. Without it a sixth per process is held while the nodes start: 10,000 nodes panicked after 3,337.
PER_NODE = {False: 6, True: 1}
SHADOW_OWN = 32


def held(pid: int) -> int:
    """The descriptors a process holds now; 0 once it is gone."""
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except (FileNotFoundError, ProcessLookupError):
        return 0


def needed(nodes: int, few_descriptors_per_process: bool) -> int:
    return nodes * PER_NODE[few_descriptors_per_process] + SHADOW_OWN


def hard_limit() -> int:
    return resource.getrlimit(resource.RLIMIT_NOFILE)[1]


def check(study: Study, limit: int | None = None) -> None:
    """Refuse, with the numbers and the way out, a run whose descriptors the limit cannot hold."""
    limit = hard_limit() if limit is None else limit
    if limit == resource.RLIM_INFINITY:
        return
    few = study.few_descriptors_per_process
    if needed(study.hosts, few) <= limit:
        return
    if not few and needed(study.hosts, True) <= limit:
        way_out = "set shadow.few_descriptors_per_process: true (one per node)"
    else:
        way_out = f"at most {(limit - SHADOW_OWN) // PER_NODE[few]:,} nodes fit here; run it on a host whose limit is higher"
    raise RunError(f"{study.hosts:,} nodes need about {needed(study.hosts, few):,} open files in Shadow "
                   f"({PER_NODE[few]} per node and {SHADOW_OWN} of its own), more than this machine's hard limit of "
                   f"{limit:,} (ulimit -Hn): {way_out}")
