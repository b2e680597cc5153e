"""The profile split, on the recorded output of a real profile: `perf report` of the 200-node 500 KB
run of muxer-yamux-n200 (seed 1, nwaku v0.37.1-beta) and the syscall counts of its Shadow log."""

import gzip
import re
import sys
from pathlib import Path

import pytest

from waku_shadow.cost import profile
from waku_shadow.errors import RunError
from waku_shadow.run import guard

DATA = Path(__file__).parent / "data" / "profile"
REPORT_TEXT = gzip.decompress((DATA / "n200-500KB-perf-report.txt.gz").read_bytes()).decode()
REPORT_LINES = [line for line in REPORT_TEXT.splitlines() if line.strip()]
TOTAL_SAMPLES = sum(int(line.split("\t")[0]) for line in REPORT_LINES)
SHADOW_LOG = DATA / "n200-500KB-shadow-log-tail.txt"


@pytest.fixture(scope="module")
def recorded():
    return profile.parse_report(REPORT_TEXT)


def raw_share(pattern: str, process: str = "wakunode2") -> float:
    """The summed share of the report lines of a process whose symbol matches, read from the text."""
    samples = 0
    for line in REPORT_LINES:
        count, comm, _dso, sym = (field.strip() for field in line.split("\t"))
        if comm == process and re.search(pattern, sym):
            samples += int(count)
    return 100 * samples / TOTAL_SAMPLES


def test_every_line_of_the_report_is_a_row(recorded):
    assert len(recorded) == len(REPORT_LINES)
    assert recorded["samples"].sum() == TOTAL_SAMPLES
    assert recorded["share_percent"].sum() == pytest.approx(100)


def test_the_split_sums_the_rows_of_each_part(recorded):
    parts = profile.split(recorded)
    assert parts["share_percent"].sum() == pytest.approx(recorded["share_percent"].sum())
    by_part = parts.groupby("part")["share_percent"].sum()
    assert by_part["nodes"] == pytest.approx(raw_share(".*"))
    assert by_part["Shadow"] == pytest.approx(sum(raw_share(".*", p) for p in profile.SHADOW_PROCESSES))


def test_the_nodes_categories_are_read_from_their_symbols(recorded):
    parts = profile.split(recorded).set_index(["part", "category"])["share_percent"]
    seq = "seq zeroing and copying (Nim ORC's setLen and =copy of seq[byte])"
    assert parts["nodes", seq] == pytest.approx(raw_share(r"\[\.\] system::(setLen|eqcopy_)"))
    assert parts["nodes", "hashing (SHA-256)"] == pytest.approx(raw_share(r"\[\.\] (sha2::|hash::digest|digest::computeMessageHash)"))
    # in this run the nodes' seq handling and hashing are the largest things the nodes do
    node_code = parts["nodes"].drop([c for c in parts["nodes"].index if c.startswith("kernel")])
    assert set(node_code.nlargest(2).index) == {seq, "hashing (SHA-256)"}


def test_kernel_time_is_split_by_what_the_kernel_did(recorded):
    parts = profile.split(recorded).set_index(["part", "category"])["share_percent"]
    assert parts["Shadow", "kernel: context switches"] >= raw_share(r"\[k\] finish_task_switch", "shadow-worker")
    assert parts["nodes", "kernel: page faults and mappings"] >= raw_share(r"\[k\] (exc_page_fault|do_anonymous_page)")


def test_a_line_that_is_not_a_report_row_is_named():
    with pytest.raises(RunError, match="line 2 is not"):
        profile.parse_report(" 12\twakunode2\twakunode2\t[.] main\nsomething else\n")
    with pytest.raises(RunError, match="no samples"):
        profile.parse_report("# only a comment\n")


def test_syscall_counts_come_from_shadows_closing_line():
    counts = profile.syscall_counts(SHADOW_LOG).set_index("syscall")["count"]
    line = SHADOW_LOG.read_text()
    assert counts["epoll_wait"] == int(re.search(r"epoll_wait:(\d+)", line)[1])
    assert counts.is_monotonic_decreasing and counts.index[0] == "epoll_wait"


def test_a_log_without_the_counts_is_named(tmp_path):
    log = tmp_path / "shadow.log"
    log.write_text("** Starting Shadow 3.3.0\n")
    with pytest.raises(RunError, match="no 'Global syscall counts' line"):
        profile.syscall_counts(log)


def test_a_folder_without_shadow_yaml_is_refused(tmp_path):
    with pytest.raises(RunError, match="not a rendered run folder"):
        profile.record(tmp_path, tmp_path / "out", "shadow", 0)


def test_the_guard_runs_shadow_under_the_wrapper(tmp_path):
    marker = tmp_path / "wrapped"
    shadow = tmp_path / "shadow"
    shadow.write_text(f"#!{sys.executable}\nimport os, sys\nopen({str(marker)!r}, 'w').write(os.environ.get('PROFILED', ''))\n"
                      "print('** Shadow completed successfully', file=sys.stderr)\n")
    shadow.chmod(0o755)
    (tmp_path / "shadow.yaml").write_text("general:\n  stop_time: 10 s\n")
    guard.run(str(shadow), tmp_path, memory_floor_bytes=0, wrapper=["env", "PROFILED=yes"])
    assert marker.read_text() == "yes"


def test_profiles_side_by_side_share_their_rows(recorded, tmp_path):
    syscalls = profile.syscall_counts(SHADOW_LOG)
    halved = recorded.assign(samples=recorded["samples"].where(~recorded["symbol"].str.startswith("sha2::"), 0))
    halved = halved.assign(share_percent=100 * halved["samples"] / halved["samples"].sum())
    for name, table, wall in (("a-before", recorded, 219.0), ("b-after", halved, 200.0)):
        (tmp_path / name).mkdir()
        profile.write(tmp_path / name, table, syscalls, wall)
    text = profile.comparison([tmp_path / "a-before", tmp_path / "b-after"])
    lines = text.splitlines()
    assert lines[0] == "| | `a-before` | `b-after` |"
    assert "| wall time under perf | 219 s | 200 s |" in lines
    after_nodes = profile.split(halved).groupby("part")["share_percent"].sum()["nodes"]
    assert f"| **nodes** | **{raw_share('.*'):.1f} %** | **{after_nodes:.1f} %** |" in lines
    hashing = next(line for line in lines if line.startswith("| hashing (SHA-256)"))
    before, after = (float(cell.strip().rstrip(" %")) for cell in hashing.split("|")[2:4])
    assert after < before
    assert profile.comparison([]) is None
