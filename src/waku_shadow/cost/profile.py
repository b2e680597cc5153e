"""Where a run's CPU time goes: a completed run folder rerun under ``perf record``.

The profile is split between Shadow (its own code, and the kernel's work on its behalf: mostly
switching between Shadow and the node it hands a system call back to) and the nodes (their own
code by what it does, and the kernel's work for them: context switches, page faults and
mappings). ``perf report`` gives the share of samples per process name, object file and symbol;
the split sums those shares by the categories below.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pandas as pd

from waku_shadow import layout
from waku_shadow.errors import RunError
from waku_shadow.run import guard, run_stats

PROFILE_TABLE = "profile.csv"
SPLIT_TABLE = "split.csv"
SYSCALL_TABLE = "syscalls.csv"
REPORT_FIELDS = "sample,comm,dso,sym"
LISTED_PERCENT = 0.01  # profile.csv lists the symbols with at least this share; the split counts every one
# the markdown tables show a part with at least SHOWN_PART_PERCENT of the samples, and within it the
# categories with at least SHOWN_CATEGORY_PERCENT (in any profile, when several are side by side)
SHOWN_PART_PERCENT = 0.05
SHOWN_CATEGORY_PERCENT = 0.5

# (category, symbol pattern) of the nodes' own code, the first match wins
NODE_CODE = [
    ("seq zeroing and copying (Nim ORC's setLen and =copy of seq[byte])", r"^system::(setLen|eqcopy_)"),
    ("hashing (SHA-256)", r"^(sha2::|hash::digest|digest::computeMessageHash)"),
    ("encryption (ChaCha20-Poly1305)", r"(chacha20|poly1305)"),
    ("key exchange and signatures (X25519, secp256k1)", r"^(api_mul|secp256k1_|br_ec_|br_i31_|br_i15_)"),
    ("allocation (malloc and free)", r"^(_int_malloc|_int_free|malloc|cfree|free|realloc|_int_realloc|unlink_chunk|malloc_consolidate|__libc_malloc|__libc_free)"),
    ("memory copies (memcpy, memset)", r"(memcpy|memmove|memset)"),
]
KERNEL = [
    ("context switches", r"^(finish_task_switch|__schedule|schedule|_raw_spin_unlock_irqrestore|__raw_callee_save___pv_queued_spin_unlock|do_sched_yield)"),
    ("page faults and mappings", r"(page_fault|anonymous_page|handle_mm_fault|clear_page|unmap_page|memcg|folio|alloc_pages|get_page_from_freelist|free_unref|free_pages|lock_vma|pte|vma_|mas_|free_frozen|rmap|lruvec)"),
]
SHADOW_PROCESSES = {"shadow", "shadow-worker", "shadow-logger", "child-pid-watch"}
NODE_PROCESS = "wakunode2"


def require_rendered(run_dir: Path) -> None:
    if not (run_dir / layout.SHADOW_CONFIG).is_file():
        raise RunError(f"{run_dir} is not a rendered run folder: it has no {layout.SHADOW_CONFIG}")


def rerun_folder(run_dir: Path, out: Path) -> Path:
    """``out/run``, made afresh with ``run_dir``'s shadow.yaml and network graph, to rerun its simulation
    in (the binaries and message files shadow.yaml names are absolute paths)."""
    require_rendered(run_dir)
    scratch = out / "run"
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    for name in (layout.SHADOW_CONFIG, layout.NETWORK_GRAPH):
        shutil.copy2(run_dir / name, scratch / name)
    return scratch


def record(run_dir: Path, out: Path, shadow_binary: str, memory_floor_bytes: int, frequency: int = 499,
           preload: str | None = None) -> Path:
    """Rerun ``run_dir``'s simulation in ``out/run`` under ``perf record``; return perf.data.

    The run folder itself is left as it is: shadow.yaml and the network graph are copied (the
    binaries and message files it names are absolute paths). Shadow runs under the memory guard.
    """
    require_rendered(run_dir)  # the input's error first, whatever the machine has
    perf = shutil.which("perf")
    if perf is None:
        raise RunError("perf not found: install it (Debian: linux-perf) to profile a run")
    scratch = rerun_folder(run_dir, out)
    perf_data = out / "perf.data"
    guard.run(shadow_binary, scratch, memory_floor_bytes,
              wrapper=[perf, "record", "-F", str(frequency), "-o", str(perf_data.absolute()), "--"], preload=preload)
    return perf_data


def profile_run(run_dir: Path, out: Path, shadow_binary: str, memory_floor_bytes: int, frequency: int,
                keep: bool = False, preload: str | None = None) -> tuple[pd.DataFrame, pd.DataFrame, float]:
    """Record ``run_dir`` under perf into ``out`` and write its tables; return (split, syscalls, wall s).
    Unless ``keep``, perf.data and the rerun's folder are removed afterwards. ``preload``: Shadow's
    malloc, as guard.run takes it."""
    perf_data = record(run_dir, out, shadow_binary, memory_floor_bytes, frequency, preload)
    wall_seconds = run_stats.read_stats(out / "run").wall_seconds
    syscalls = syscall_counts(out / "run" / layout.SHADOW_LOG)
    parts = write(out, parse_report(report_text(perf_data)), syscalls, wall_seconds)
    if not keep:
        perf_data.unlink()
        shutil.rmtree(out / "run")
    return parts, syscalls, wall_seconds


def report_text(perf_data: Path) -> str:
    """``perf report``'s flat profile: samples per process name, object file and symbol."""
    done = subprocess.run(
        ["perf", "report", "-i", str(perf_data), "--stdio", "--no-children", "-q", "-g", "none",
         "--sort", "comm,dso,sym", "-F", REPORT_FIELDS, "-t", "\t"],
        capture_output=True, text=True,
    )
    if done.returncode != 0:
        raise RunError(f"perf report failed on {perf_data}: {done.stderr.strip()[-400:]}")
    return done.stdout


def parse_report(text: str) -> pd.DataFrame:
    """One row per (process, object, symbol) with its samples and share of all samples in percent."""
    rows = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = [field.strip() for field in line.split("\t")]
        if len(fields) != 4 or not fields[0].isdigit():
            raise RunError(f"perf report line {number} is not 'samples<TAB>process<TAB>object<TAB>symbol': {line!r}")
        samples, comm, dso, sym = fields
        match = re.match(r"\[(.)\]\s+(.*)", sym)
        rows.append({
            "process": comm,
            "object": dso,
            "space": "kernel" if match and match[1] == "k" else "user",
            "symbol": match[2] if match else sym,
            "samples": int(samples),
        })
    if not rows:
        raise RunError("perf report gave no samples")
    table = pd.DataFrame(rows)
    return table.assign(share_percent=100 * table["samples"] / table["samples"].sum())


def category(row: pd.Series) -> tuple[str, str]:
    """(part, category) of one profile row."""
    if row["process"] in SHADOW_PROCESSES:
        part = "Shadow"
    elif row["process"] == NODE_PROCESS:
        part = "nodes"
    else:
        return "other processes", row["process"]
    if row["space"] == "kernel":
        for name, pattern in KERNEL:
            if re.search(pattern, row["symbol"]):
                return part, f"kernel: {name}"
        return part, "kernel: other"
    if part == "Shadow":
        return part, "Shadow's own code" if row["object"] == "shadow" else f"Shadow's libraries ({row['object']})"
    if row["object"].startswith("libshadow"):
        return part, "Shadow's shim inside the node"
    for name, pattern in NODE_CODE:
        if re.search(pattern, row["symbol"]):
            return part, name
    return part, "other node code"


def split(profile: pd.DataFrame) -> pd.DataFrame:
    """Share of the samples per (part, category), largest first within each part."""
    labelled = profile.assign(**dict(zip(("part", "category"), zip(*profile.apply(category, axis=1)))))
    table = labelled.groupby(["part", "category"], as_index=False)["share_percent"].sum()
    part_share = table.groupby("part")["share_percent"].transform("sum")
    return (table.assign(part_percent=part_share)
            .sort_values(["part_percent", "share_percent"], ascending=False)
            .drop(columns="part_percent").reset_index(drop=True))


def syscall_counts(shadow_log: Path) -> pd.DataFrame:
    """The system calls Shadow served, from its closing 'Global syscall counts' line."""
    for line in shadow_log.read_text(errors="replace").splitlines():
        if "Global syscall counts:" in line:
            counts = re.findall(r"([\w-]+):(\d+)", line.split("Global syscall counts:", 1)[1])
            return (pd.DataFrame(counts, columns=["syscall", "count"]).astype({"count": int})
                    .sort_values("count", ascending=False).reset_index(drop=True))
    raise RunError(f"{shadow_log} has no 'Global syscall counts' line: did Shadow finish?")


def write(out: Path, profile: pd.DataFrame, syscalls: pd.DataFrame, wall_seconds: float) -> pd.DataFrame:
    parts = split(profile)
    listed = profile[profile["share_percent"] >= LISTED_PERCENT]
    listed.sort_values("share_percent", ascending=False).to_csv(out / PROFILE_TABLE, index=False)
    parts.assign(wall_seconds=wall_seconds).to_csv(out / SPLIT_TABLE, index=False)
    syscalls.to_csv(out / SYSCALL_TABLE, index=False)
    return parts


def to_markdown(parts: pd.DataFrame, syscalls: pd.DataFrame, top: int = 6) -> str:
    lines = ["| part | where | share of CPU samples |", "|---|---|---:|"]
    for part, rows in parts.groupby("part", sort=False):
        if rows["share_percent"].sum() < SHOWN_PART_PERCENT:
            continue
        lines.append(f"| **{part}** | | **{rows['share_percent'].sum():.1f} %** |")
        lines += [f"| | {r.category} | {r.share_percent:.1f} % |" for r in rows.itertuples() if r.share_percent >= SHOWN_CATEGORY_PERCENT]
    total = syscalls["count"].sum()
    calls = ", ".join(f"{r.syscall} {r.count / 1e6:.2f} M" for r in syscalls.head(top).itertuples())
    lines += ["", f"System calls Shadow served: {total / 1e6:.2f} M ({calls})."]
    return "\n".join(lines)


def comparison(profile_dirs: list[Path]) -> str | None:
    """The splits of several profiles side by side, one column each, with their wall time and system calls."""
    columns, order = {}, []
    header_rows = {"wall time under perf": {}, "system calls Shadow served": {}}
    for directory in profile_dirs:
        parts = pd.read_csv(directory / SPLIT_TABLE)
        name = directory.name
        columns[name] = {(r.part, r.category): r.share_percent for r in parts.itertuples()}
        order += [key for key in columns[name] if key not in order]
        header_rows["wall time under perf"][name] = f"{parts['wall_seconds'].iloc[0]:.0f} s"
        calls = pd.read_csv(directory / SYSCALL_TABLE)["count"].sum()
        header_rows["system calls Shadow served"][name] = f"{calls / 1e6:.2f} M"
    if not columns:
        return None
    names = list(columns)
    lines = ["| | " + " | ".join(f"`{n}`" for n in names) + " |", "|---|" + "---:|" * len(names)]
    lines += [f"| {label} | " + " | ".join(values[n] for n in names) + " |" for label, values in header_rows.items()]
    for part in dict.fromkeys(part for part, _ in order):
        totals = [sum(share for (p, _), share in columns[n].items() if p == part) for n in names]
        if max(totals) < SHOWN_PART_PERCENT:
            continue
        lines.append(f"| **{part}** | " + " | ".join(f"**{t:.1f} %**" for t in totals) + " |")
        for key in (k for k in order if k[0] == part):
            shares = [columns[n].get(key, 0.0) for n in names]
            if max(shares) >= SHOWN_CATEGORY_PERCENT:
                lines.append(f"| {key[1]} | " + " | ".join(f"{s:.1f} %" for s in shares) + " |")
    return "\n".join(lines)
