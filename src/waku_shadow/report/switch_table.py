"""performance.md's tables of the settings that save time or trade memory for speed, each with what
its paired benchmark in bench/ measured (waku-shadow bench: the overlay that turns the setting off,
or on, against the study as it is, back to back)."""

from __future__ import annotations

import json
from pathlib import Path

from waku_shadow.configuration.units import human_size
from waku_shadow.report import tables as written

BASE_LABEL = "paper"
# setting (its patch), what it leaves out, the overlay that turns it off
TIME_SAVERS = [
    ("`shadow.shim_memory_syscalls` (Shadow 0002)", "a round trip to Shadow for each node's mmap, munmap, brk …",
     "unpatched-shadow"),
    ("`shadow.nwaku_copy_once` (nwaku 0006, 0020)", "a relayed message encoded, decoded and hashed once per peer", "uncut"),
    ("`shadow.nwaku_hash_once` (0017)", "a duplicate's id hashed again", "hash-every-copy"),
    ("`shadow.nwaku_poll_once_per_burst`, `shadow.nwaku_select_only_to_wait` (0007, 0026)",
     "selects that cannot block and find nothing", "select-after-wake"),
    ("`shadow.nwaku_null_cipher` (0025)", "ChaCha20-Poly1305 (frames keep their length)", "encrypted"),
    ("`shadow.nwaku_stand_in_key_exchange` (0027)", "X25519's scalar multiplications", "x25519"),
    ("`shadow.nwaku_without_health_loop` (0029)", "the health monitor's loop, which sends nothing", "health-loop"),
    ("`shadow.nwaku_without_exception_traces` (0033)", "every raised exception's stack trace", "exception-traces"),
    ("`stack.shadow.allocator: auto` (jemalloc where installed)", "glibc's malloc in Shadow", "shadow-glibc"),
]
# overlay, what it trades (each is off by default: its benchmark turns it on)
TRADES = [
    ("speed-over-memory", "glibc's mmap threshold at 1 MiB: a 500 KB buffer reused from the heap, not mapped and "
                          "zeroed afresh; for hosts where memory is not what limits N"),
    ("merge-pages", "`resources.merge_identical_pages` (KSM, Linux 6.8 or later): every node's identical pages merged, "
                    "at the CPU of the kernel's page scanner"),
]


def paired(bench_dir: Path, overlay: str) -> tuple[dict, dict, str] | None:
    """The newest paired benchmark of the study with ``overlay`` against it as it is: the run with the
    overlay, the run without, and when; None when there is none."""
    label = f"{BASE_LABEL}+{overlay}"
    names = (f"{label}-vs-{BASE_LABEL}", f"{BASE_LABEL}-vs-{label}")
    found = sorted(p for p in bench_dir.glob("*.json") if p.stem.split("-", 1)[-1] in names)
    if not found:
        return None
    rows = json.loads(found[-1].read_text())["rows"]
    with_overlay = next(r for r in rows if r["label"] == label)
    without = next(r for r in rows if r["label"] == BASE_LABEL)
    return with_overlay, without, found[-1].stem.split("-", 1)[0][:8]


def _measured(pair: tuple[dict, dict, str] | None, first: int, then: int) -> str:
    """``first`` → ``then`` (0: the run with the overlay, 1: without) in wall time and peak memory."""
    if pair is None:
        return "no paired benchmark in bench/"
    runs, day = pair[:2], pair[2]
    a, b = runs[first], runs[then]
    return (f"N = {a['nodes']:,}, {human_size(a['size_bytes'])}: {a['wall_s']:.1f} → {b['wall_s']:.1f} s, "
            f"{a['peak_memory_gib']:.2f} → {b['peak_memory_gib']:.2f} GiB ({day[:4]}-{day[4:6]}-{day[6:]})")


def time_savers(bench_dir: Path) -> str:
    """Each setting on by default that saves time with the receipts unchanged: off (its overlay) → on."""
    rows = [[setting, leaves_out, f"`{overlay}.yaml`", _measured(paired(bench_dir, overlay), 0, 1)]
            for setting, leaves_out, overlay in TIME_SAVERS]
    return written.table(rows, ["setting (patch)", "what it leaves out", "overlay that turns it off",
                                "measured: off → on"], "llll").markdown()


def trades(bench_dir: Path) -> str:
    """Each overlay that trades memory for speed: without → with it."""
    rows = [[f"`configs/overlays/{overlay}.yaml`", what, _measured(paired(bench_dir, overlay), 1, 0)]
            for overlay, what in TRADES]
    return written.table(rows, ["overlay", "what it changes", "measured: without → with"], "lll").markdown()
