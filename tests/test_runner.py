"""The Shadow runner and its memory guard, driven by a stand-in for the shadow binary."""

import gzip
import itertools
import json
import os
import re
import shutil
import sys
import textwrap
import time
from pathlib import Path

import pytest
from conftest import RECORDED

from waku_shadow import layout
from waku_shadow.errors import RunError, StackError
from waku_shadow.run import allocator, guard, memory, run_stats, shadow_log

GIB = 1024**3


def fake_shadow(tmp_path, body: str):
    """An executable that behaves like shadow for the runner: progress on stderr, logs on stdout."""
    script = tmp_path / "fake-shadow"
    script.write_text("#!/usr/bin/env python3\nimport sys, time\n" + textwrap.dedent(body))
    script.chmod(0o755)
    (tmp_path / "shadow.yaml").write_text("general:\n  stop_time: 60 s\n")
    return str(script)


PROGRESS = 'print("Progress: {p}% \u2014 simulated: {t}/00:01:00, realtime: 00:00:01, processes failed: 0", file=sys.stderr, flush=True)'


def test_completed_run_records_stats(tmp_path, monkeypatch):
    # runs long enough for the guard's polls to see the three levels, however loaded the machine
    shadow = fake_shadow(tmp_path, PROGRESS.format(p=50, t="00:00:30.000") + "\ntime.sleep(1)\n" + PROGRESS.format(p=100, t="00:01:00.000") + "\n")
    levels = itertools.chain([10 * GIB, 9 * GIB, 7 * GIB], itertools.repeat(8 * GIB))
    monkeypatch.setattr(memory, "available_bytes", lambda: next(levels))
    stats = guard.run(shadow, tmp_path, memory_floor_bytes=2 * GIB, poll_interval_s=0.01, echo_progress=False)
    assert stats.status == "completed"
    assert stats.simulated_reached == "00:01:00.000"
    assert stats.peak_memory_bytes >= 3 * GIB - 1
    assert json.loads((tmp_path / "run_stats.json").read_text())["status"] == "completed"
    assert "simulated: 00:00:30.000" in (tmp_path / "shadow.stderr").read_text()


def test_run_too_fast_for_a_progress_line_ends_at_the_stop_time(tmp_path, monkeypatch):
    shadow = fake_shadow(tmp_path, 'print("** Shadow completed successfully", file=sys.stderr)\n')
    monkeypatch.setattr(memory, "available_bytes", lambda: 10 * GIB)
    stats = guard.run(shadow, tmp_path, memory_floor_bytes=2 * GIB, poll_interval_s=0.01, echo_progress=False)
    assert (stats.simulated_reached, stats.simulated_end) == ("00:01:00.000", "00:01:00.000")


def test_a_relative_shadow_path_is_found_from_where_the_workflow_runs(tmp_path, monkeypatch):
    """The build rule installs Shadow at a relative path; Shadow itself starts in the run folder."""
    run_dir = tmp_path / "results" / "run"
    run_dir.mkdir(parents=True)
    shadow = Path(fake_shadow(run_dir, PROGRESS.format(p=100, t="00:01:00.000") + "\n"))
    (tmp_path / "bin").mkdir()
    shadow.rename(tmp_path / "bin" / "shadow")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(memory, "available_bytes", lambda: 10 * GIB)
    stats = guard.run("bin/shadow", run_dir, memory_floor_bytes=2 * GIB, poll_interval_s=0.01, echo_progress=False)
    assert stats.status == "completed"


HEARTBEAT = (
    'print("00:03:55.001 [1:shadow] n/a [INFO] [n/a] [manager.rs:736] [shadow_rs::core::manager] '
    'Process resource usage at simtime 21050118650 reported by getrusage(): ru_maxrss=0.531 GiB", flush=True)'
)


# the fake Shadow says it has printed; until then memory stays high, however slowly it starts
PRINTED = '\nopen("printed", "w").close()'


def memory_falls_once_printed(run_dir: Path):
    """The machine's available memory: 20 GiB until the fake Shadow has printed, then 1 GiB."""
    return lambda: 1 * GIB if (run_dir / "printed").exists() else 20 * GIB


def test_memory_guard_stops_the_run_and_says_where(tmp_path, monkeypatch):
    shadow = fake_shadow(tmp_path, PROGRESS.format(p=12, t="00:00:07.250") + PRINTED + "\ntime.sleep(60)\n")
    monkeypatch.setattr(memory, "available_bytes", memory_falls_once_printed(tmp_path))
    with pytest.raises(RunError) as error:
        guard.run(shadow, tmp_path, memory_floor_bytes=2 * GIB, poll_interval_s=0.01, echo_progress=False)
    text = str(error.value)
    assert "memory guard stopped Shadow at simulated time 00:00:07.250 of 00:01:00" in text
    assert "below the floor of 2.0 GiB (the machine had lost 19.0 GiB since the run started, 0.0 GiB of it by the run itself" in text
    assert json.loads((tmp_path / "run_stats.json").read_text())["status"] == "stopped by memory guard"


def test_memory_guard_reports_the_latest_heartbeat(tmp_path, monkeypatch):
    """Progress lines come at growing intervals; Shadow's heartbeat in its log is fresher."""
    shadow = fake_shadow(tmp_path, PROGRESS.format(p=8, t="00:00:07.250") + "\n" + HEARTBEAT + PRINTED + "\ntime.sleep(60)\n")
    monkeypatch.setattr(memory, "available_bytes", memory_falls_once_printed(tmp_path))
    with pytest.raises(RunError, match="at simulated time 00:00:21.050 of 00:01:00"):
        guard.run(shadow, tmp_path, memory_floor_bytes=2 * GIB, poll_interval_s=0.01, echo_progress=False)


def test_refuses_to_start_below_the_floor(tmp_path, monkeypatch):
    shadow = fake_shadow(tmp_path, "")
    monkeypatch.setattr(memory, "available_bytes", lambda: 1 * GIB)
    with pytest.raises(RunError, match="only 1.0 GiB of memory is available before the run"):
        guard.run(shadow, tmp_path, memory_floor_bytes=2 * GIB)


def test_a_failed_run_keeps_its_evidence_outside_the_run_folder(tmp_path):
    """The crashed node's output, Shadow's log and the attempt survive the run folder being rendered anew."""
    study_dir = tmp_path / "study"
    run_dir = layout.run_dir(study_dir, "n8-size2000B-seed1")
    run_dir.mkdir(parents=True)
    log = RECORDED / "shadow-crashed-node.log"
    shadow = fake_shadow(run_dir, f"""
import pathlib
host = pathlib.Path("shadow.data/hosts/node0005")
host.mkdir(parents=True)
(host / "wakunode2.1000.stdout").write_text("last words\\n")
(host / "wakunode2.1000.stderr").write_text("fatal\\n")
(pathlib.Path("shadow.data/hosts/node0001")).mkdir()
(pathlib.Path("shadow.data/hosts/node0001/wakunode2.1000.stdout")).write_text("alive\\n")
print(open({str(log)!r}).read())
sys.exit(1)
""")
    attempts = layout.attempts(study_dir, run_dir.name)
    with pytest.raises(RunError) as error:
        guard.run(shadow, run_dir, memory_floor_bytes=0, echo_progress=False,
                   attempts_log=attempts, failures_dir=layout.failures(study_dir, run_dir.name))
    (kept,) = layout.failures(study_dir, run_dir.name).iterdir()
    assert f"kept in {kept}" in str(error.value)
    shutil.rmtree(run_dir)  # what rendering the run again does
    assert gzip.open(kept / "hosts" / "node0005" / "wakunode2.1000.stdout.gz", "rt").read() == "last words\n"
    assert gzip.open(kept / "hosts" / "node0005" / "wakunode2.1000.stderr.gz", "rt").read() == "fatal\n"
    assert not (kept / "hosts" / "node0001").exists()  # a node that did not fail
    assert "node0005.wakunode2.1000" in gzip.open(kept / "shadow.log.gz", "rt").read()
    assert json.loads(attempts.read_text())["status"] == "failed"
    assert json.loads((kept / "run_stats.json").read_text())["failed_processes"][0]["process"] == "node0005.wakunode2.1000"


def test_failed_processes_are_named(tmp_path):
    """Shadow's own log of a real run in which one nwaku process died at start."""
    log = RECORDED / "shadow-crashed-node.log"
    shadow = fake_shadow(tmp_path, f"print(open({str(log)!r}).read())\nsys.exit(1)\n")
    with pytest.raises(RunError) as error:
        guard.run(shadow, tmp_path, memory_floor_bytes=0, echo_progress=False)
    text = str(error.value)
    assert text.startswith("Shadow exited with code 1 at simulated time 00:00:14.000; 3 processes ended in an unexpected state: ")
    assert "node0005.wakunode2.1000: expected running, was exited: 1" in text
    assert "node0000.curl.1001: expected exited: 0, was exited: 22" in text
    failed = run_stats.read_stats(tmp_path).failed_processes
    assert [f["process"] for f in failed] == ["node0005.wakunode2.1000", "node0000.curl.1001", "node0000.curl.1002"]


def test_shadow_setup_error_is_quoted(tmp_path):
    # what Shadow 3.3 printed on stderr for a publish scheduled after the stop time
    stderr = [
        "** Starting Shadow 3.3.0",
        "Error: Failed to initialize the simulation",
        "Error: ",
        "Error: Caused by:",
        "Error:     0: Failed to configure host 'node0003'",
        "Error:     1: Failed to configure process '/usr/bin/curl'",
        "Error:     2: Process start time '40 sec' must be earlier than the simulation stop time '25 sec'",
        "Error: ",
        "Error: Stack backtrace:",
        "Error:    0: anyhow::error::<impl anyhow::Error>::msg",
    ]
    shadow = fake_shadow(tmp_path, "".join(f"print({line!r}, file=sys.stderr)\n" for line in stderr) + "sys.exit(1)\n")
    with pytest.raises(RunError) as error:
        guard.run(shadow, tmp_path, memory_floor_bytes=0, echo_progress=False)
    assert str(error.value) == (
        "Shadow exited with code 1 at simulated time 00:00:00.000: Failed to initialize the simulation "
        "0: Failed to configure host 'node0003' 1: Failed to configure process '/usr/bin/curl' "
        "2: Process start time '40 sec' must be earlier than the simulation stop time '25 sec'"
        f"; see {tmp_path / 'shadow.log'}"
    )


@pytest.mark.parametrize(
    "recorded, key, patch",
    [
        # Shadow v3.3.0 as released, asked for experimental.tcp_slow_start_after_idle
        ("shadow-unpatched-option.stderr", "network.tcp_slow_start_after_idle", "0001-tcp-slow-start-after-idle"),
        # Shadow v3.3.0 with 0001 only, asked for experimental.shim_memory_syscalls
        ("shadow-without-0002.stderr", "shadow.shim_memory_syscalls", "0002-shim-memory-syscalls"),
    ],
)
def test_an_unpatched_shadow_names_the_setting_and_the_patch(tmp_path, recorded, key, patch):
    shadow = fake_shadow(tmp_path, f"sys.stderr.write(open({str(RECORDED / recorded)!r}).read())\nsys.exit(1)\n")
    with pytest.raises(RunError) as error:
        guard.run(shadow, tmp_path, memory_floor_bytes=0, echo_progress=False)
    option = key.split(".")[1]
    assert str(error.value).startswith(
        f"Shadow exited with code 1 at simulated time 00:00:00.000: {key}: true needs "
        f"a Shadow built with shadow/patches/{patch}.patch, and this Shadow does not know "
        f"its option experimental.{option}; let the workflow build Shadow (stack.shadow.binary: null) "
        f"or point stack.shadow.binary at a Shadow built with the patch, or set {key}: false"
    )


def test_an_unknown_option_of_no_patch_is_not_blamed_on_one(tmp_path):
    (tmp_path / "shadow.stderr").write_text("    1: unknown field `use_memory_manger`, expected one of `use_sched_fifo`\n")
    assert shadow_log.missing_patch(tmp_path / "shadow.stderr") == ""


def test_stopping_the_runner_stops_shadow(tmp_path, monkeypatch):
    shadow = fake_shadow(tmp_path, "import os\nopen('pid', 'w').write(str(os.getpid()))\ntime.sleep(60)\n")
    calls = itertools.count()

    def available():
        if next(calls) == 20:
            raise KeyboardInterrupt  # what a SIGTERM to the runner turns into
        return 20 * GIB

    monkeypatch.setattr(memory, "available_bytes", available)
    with pytest.raises(KeyboardInterrupt):
        guard.run(shadow, tmp_path, memory_floor_bytes=GIB, poll_interval_s=0.05, echo_progress=False)
    pid = int((tmp_path / "pid").read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_missing_shadow_binary(tmp_path):
    with pytest.raises(RunError, match="Shadow binary not found or not executable: /nonexistent/shadow"):
        guard.run("/nonexistent/shadow", tmp_path, memory_floor_bytes=0)


def test_the_peak_is_the_runs_own_and_its_sample_tells_shadow_from_its_processes(tmp_path, monkeypatch):
    # A stand-in shadow starts one managed process that holds 8 MiB, then 96 MiB for a moment shorter
    # than the machine's low (another job's), then 8 MiB again. The run's peak is the sample of the
    # moment its process held most, and that sample names where the memory was.
    grown, shrunk = tmp_path / "grown", tmp_path / "shrunk"
    # the process runs as wakunode2 in a light client's host folder, so it is counted as that role's node
    (tmp_path / "wakunode2").symlink_to(sys.executable)
    (tmp_path / "identities.csv").write_text("host,role\nnode0000,relay\nclient0000,light\n")
    host = tmp_path / "shadow.data" / "hosts" / "client0000"
    node = (f"import pathlib, time; held = bytearray(8 << 20); time.sleep(1); more = bytearray(96 << 20); "
            f"pathlib.Path('{grown}').touch(); time.sleep(1); del more; pathlib.Path('{shrunk}').touch(); time.sleep(60)")
    shadow = fake_shadow(
        tmp_path,
        f"""
        import pathlib, subprocess
        pathlib.Path("{host}").mkdir(parents=True)
        holder = subprocess.Popen(["{tmp_path / 'wakunode2'}", "-c", "{node}"], cwd="{host}")
        while not pathlib.Path("{shrunk}").exists():
            time.sleep(0.05)
        time.sleep(1)
        holder.kill()
        holder.wait()
        """,
    )
    levels = itertools.chain([10 * GIB] * 5, itertools.repeat(7 * GIB))
    monkeypatch.setattr(memory, "available_bytes", lambda: next(levels))
    monkeypatch.setattr(guard, "SAMPLE_INTERVAL_S", 0.1)
    stats = guard.run(shadow, tmp_path, memory_floor_bytes=GIB, poll_interval_s=0.05, echo_progress=False)
    at_peak = stats.memory_at_peak
    assert at_peak["processes"] == 1
    assert 104 << 20 <= at_peak["processes_anon_bytes"] < 160 << 20  # sampled while it held 8 + 96 MiB
    assert 0 < at_peak["shadow_rss_bytes"] < 64 << 20
    assert stats.resident_peak_bytes == at_peak["own_bytes"] == at_peak["shadow_rss_bytes"] + at_peak["processes_anon_bytes"]
    assert (stats.memory_bytes, stats.memory_measure) == (stats.resident_peak_bytes, run_stats.RESIDENT_MEASURE)
    assert stats.peak_memory_bytes == 3 * GIB  # the machine's fall counts what ran beside the run
    assert at_peak["nodes_by_role"] == {"light": 1} and at_peak["anon_bytes_by_role"]["light"] == at_peak["processes_anon_bytes"]
    assert json.loads((tmp_path / "run_stats.json").read_text())["memory_at_peak"] == at_peak


def test_the_kernels_growth_is_read_from_meminfo(monkeypatch):
    fields = {"PageTables": 3 << 20, "KernelStack": 2 << 20, "SUnreclaim": 5 << 20}
    monkeypatch.setattr(memory, "_meminfo_bytes", fields.__getitem__)
    assert memory.kernel_bytes() == 10 << 20


def test_stats_recorded_before_the_breakdown_still_read(tmp_path):
    stats = json.loads((RECORDED / "recorded" / "n16-size2000B-seed11" / "run_stats.json").read_text())
    assert "memory_at_peak" not in stats
    (tmp_path / "run_stats.json").write_text(json.dumps(stats))
    assert run_stats.read_stats(tmp_path).memory_at_peak is None


class _Prctl:
    """A stand-in for libc's prctl that answers PR_GET_MEMORY_MERGE with ``result``."""

    def __init__(self, result: int):
        self.result = result

    def prctl(self, *args) -> int:
        return self.result


def test_page_merging_needs_a_kernel_that_can(monkeypatch):
    monkeypatch.setattr(memory, "_libc", _Prctl(-1))
    with pytest.raises(RunError, match=r"resources.merge_identical_pages: this kernel cannot merge .*Linux 6.8"):
        memory.check_page_merging()


@pytest.mark.parametrize("state", ["0\n", None])
def test_page_merging_needs_ksm_running(tmp_path, monkeypatch, state):
    monkeypatch.setattr(memory, "_libc", _Prctl(0))
    monkeypatch.setattr(memory, "KSM", tmp_path)
    if state is not None:
        (tmp_path / "run").write_text(state)
    with pytest.raises(RunError, match=r"KSM\) is not running .*echo 1 > .*/run, or set it false"):
        memory.check_page_merging()


def test_shadow_and_its_processes_may_merge_pages(tmp_path, monkeypatch):
    if memory._libc.prctl(memory.PR_GET_MEMORY_MERGE, 0, 0, 0, 0) < 0:
        pytest.skip("this kernel cannot merge a process's pages (PR_GET_MEMORY_MERGE needs Linux 6.8)")
    ksm = tmp_path / "ksm"
    ksm.mkdir()
    (ksm / "run").write_text("1\n")
    monkeypatch.setattr(memory, "KSM", ksm)
    monkeypatch.setattr(memory, "available_bytes", lambda: 10 * GIB)
    # the stand-in records whether its child, started after exec, may merge its pages
    shadow = fake_shadow(
        tmp_path,
        """
        import subprocess
        child = "import ctypes; print(ctypes.CDLL(None).prctl(68, 0, 0, 0, 0))"
        merging = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True).stdout.strip()
        open("merging", "w").write(merging)
        """,
    )
    guard.run(shadow, tmp_path, memory_floor_bytes=GIB, poll_interval_s=0.05, echo_progress=False, merge_identical_pages=True)
    assert (tmp_path / "merging").read_text() == "1"
    guard.run(shadow, tmp_path, memory_floor_bytes=GIB, poll_interval_s=0.05, echo_progress=False)
    assert (tmp_path / "merging").read_text() == "0"


def test_a_run_over_its_declared_memory_is_stopped_alone(tmp_path, monkeypatch):
    """With runs sharing a machine, the guard stops the one that takes more than it declared, while the
    machine still has memory to spare (here: it always does)."""
    shadow = fake_shadow(tmp_path, "ballast = bytearray(160 * 2**20)\nfor _ in range(600):\n    time.sleep(0.1)\n")
    monkeypatch.setattr(guard, "SAMPLE_INTERVAL_S", 0.2)
    with pytest.raises(RunError, match=r"the run took 0\.\d GiB, more than the 0\.1 GiB it declared") as stopped:
        guard.run(shadow, tmp_path, memory_floor_bytes=1, poll_interval_s=0.05, echo_progress=False,
                   memory_budget_bytes=100 * 2**20)
    assert "resources.run_memory" in str(stopped.value)
    assert run_stats.read_stats(tmp_path).status == "stopped by memory guard"


def test_a_run_within_its_declared_memory_completes_and_shadow_gets_its_threads(tmp_path, monkeypatch):
    shadow = fake_shadow(tmp_path, "print(' '.join(sys.argv[1:]))\nballast = bytearray(20 * 2**20)\ntime.sleep(0.6)\n")
    monkeypatch.setattr(guard, "SAMPLE_INTERVAL_S", 0.2)
    stats = guard.run(shadow, tmp_path, memory_floor_bytes=1, poll_interval_s=0.05, echo_progress=False,
                       memory_budget_bytes=500 * 2**20, parallelism=3)
    assert stats.status == "completed"
    assert (tmp_path / layout.SHADOW_LOG).read_text().split() == ["--progress", "true", "--parallelism", "3", layout.SHADOW_CONFIG]


def test_runs_recorded_before_the_resident_measure_show_the_best_they_have(tmp_path):
    recorded = {k: v for k, v in json.loads((RECORDED / "recorded" / "n16-size2000B-seed11" / layout.RUN_STATS).read_text()).items()
                if k not in ("own_peak_memory_bytes", "resident_peak_bytes")}
    stats = run_stats.RunStats(**recorded)
    assert (stats.memory_bytes, stats.memory_measure) == (recorded["peak_memory_bytes"], run_stats.MACHINE_MEASURE)
    stats = run_stats.RunStats(**recorded, own_peak_memory_bytes=5 << 30)
    assert (stats.memory_bytes, stats.memory_measure) == (5 << 30, run_stats.OWN_MEASURE)


SPINNING_NODE = """
import os, subprocess
os.makedirs("shadow.data/hosts/node0007")
spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"], cwd="shadow.data/hosts/node0007")
open("spinner", "w").write(str(spinner.pid))
"""


def test_a_run_whose_simulated_time_stands_still_is_stopped_naming_its_busiest_node(tmp_path, monkeypatch):
    """A node in a loop of calls that never block holds Shadow's clock: its progress lines repeat one time."""
    repeated = "\n".join([PROGRESS.format(p=39, t="00:00:33.700"), "time.sleep(0.2)"] * 50)
    shadow = fake_shadow(tmp_path, SPINNING_NODE + repeated + "\n")
    monkeypatch.setattr(memory, "available_bytes", lambda: 20 * GIB)
    with pytest.raises(RunError) as stopped:
        guard.run(shadow, tmp_path, memory_floor_bytes=GIB, poll_interval_s=0.05, echo_progress=False,
                  stall_timeout_s=1.5)
    text = str(stopped.value)
    assert "simulated time stood still at 00:00:33.700 for 2 s of wall time" in text
    assert re.search(r"the busiest, node0007's python[\d.]*, had used \d+ s of CPU", text)
    assert "shadow.model_unblocked_syscall_latency" in text
    assert run_stats.read_stats(tmp_path).status == "stopped: simulated time stood still"
    spinner = int((tmp_path / "spinner").read_text())
    for _ in range(100):  # the stop is a SIGTERM to the session, which a busy process takes a moment to act on
        if not running(spinner):
            break
        time.sleep(0.05)
    assert not running(spinner)


def running(pid: int) -> bool:
    """Whether ``pid`` still runs: an orphan that was stopped may linger as a zombie until it is reaped."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_a_run_whose_simulated_time_moves_outlasts_the_stall_timeout(tmp_path, monkeypatch):
    moving = "\n".join(f"{PROGRESS.format(p=i, t=f'00:00:{i:02d}.000')}\ntime.sleep(0.2)" for i in range(15))
    shadow = fake_shadow(tmp_path, moving + "\n")
    monkeypatch.setattr(memory, "available_bytes", lambda: 20 * GIB)
    stats = guard.run(shadow, tmp_path, memory_floor_bytes=GIB, poll_interval_s=0.05, echo_progress=False,
                      stall_timeout_s=1.0)
    assert stats.status == "completed"


def test_shadow_runs_with_the_malloc_it_is_given_and_the_run_says_which(tmp_path, monkeypatch):
    """stack.shadow.allocator reaches Shadow's process as LD_PRELOAD (libc itself stands in for a
    malloc library here), and run_stats.json names it; without one Shadow gets no LD_PRELOAD of ours."""
    shadow = fake_shadow(tmp_path, "import os\nprint(os.environ.get('LD_PRELOAD', 'none'))\n")
    monkeypatch.delenv("LD_PRELOAD", raising=False)
    stats = guard.run(shadow, tmp_path, memory_floor_bytes=1, poll_interval_s=0.01, echo_progress=False, preload="libc.so.6")
    assert (tmp_path / layout.SHADOW_LOG).read_text().split() == ["libc.so.6"]
    assert json.loads((tmp_path / layout.RUN_STATS).read_text())["shadow_allocator"] == stats.shadow_allocator == "libc.so.6"
    stats = guard.run(shadow, tmp_path, memory_floor_bytes=1, poll_interval_s=0.01, echo_progress=False)
    assert (tmp_path / layout.SHADOW_LOG).read_text().split() == ["none"]
    assert stats.shadow_allocator == "glibc"


@pytest.mark.parametrize("installed", [None, "libjemalloc.so.2"])
def test_auto_takes_jemalloc_where_it_is_installed(monkeypatch, installed):
    monkeypatch.setattr(allocator.ctypes.util, "find_library", lambda name: installed if name == "jemalloc" else None)
    assert allocator.preload("auto") == installed
    assert allocator.preload("glibc") is None
    if installed:
        assert allocator.preload("jemalloc") == installed
    else:
        with pytest.raises(StackError, match=r"stack.shadow.allocator: jemalloc, but libjemalloc is not installed \(Debian: apt install libjemalloc2\)"):
            allocator.preload("jemalloc")


def test_a_malloc_library_given_by_path_must_exist(tmp_path):
    library = tmp_path / "libmymalloc.so"
    with pytest.raises(StackError, match=f"stack.shadow.allocator: {library} is not a file"):
        allocator.preload(str(library))
    library.write_bytes(b"")
    assert allocator.preload(str(library)) == str(library)
