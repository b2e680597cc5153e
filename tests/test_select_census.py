"""The select census on recorded strace logs: the tiny study's 200 KB run (8 nodes, tests/test_stack.py)
rerun with Shadow's deterministic strace logging, with nwaku patch 0026 off and on."""

import gzip
import re
from pathlib import Path

import pytest

from waku_shadow.cost import select_census
from waku_shadow.errors import RunError

RECORDED = Path(__file__).parent / "data" / "recorded-selects"


def completed_epoll_waits(hosts: Path) -> int:
    return sum(
        1
        for path in hosts.glob("*/*.strace.gz")
        for line in gzip.open(path, "rt")
        if re.search(r"\] epoll_wait\(.*\) = \d+$", line)
    )


@pytest.fixture(scope="module")
def censuses():
    return {setting: select_census.census(RECORDED / setting) for setting in ("off", "on")}


@pytest.mark.parametrize("setting", ["off", "on"])
def test_the_census_counts_every_completed_select_once(censuses, setting):
    assert censuses[setting]["selects"].sum() == completed_epoll_waits(RECORDED / setting) > 0


def test_without_0026_a_wake_up_ends_in_a_select_that_finds_nothing(censuses):
    counts = select_census.summary(censuses["off"])
    assert counts["cannot_block_after_events"] > 0.2 * counts["selects"]
    assert counts["of_which_found_nothing"] > 0.95 * counts["cannot_block_after_events"]
    assert counts["of_which_end_of_stream"] <= counts["found_without_a_new_watch"]


def test_with_0026_that_select_is_asked_only_after_a_new_watch_or_a_hang_up(censuses):
    off, on = (select_census.summary(censuses[setting]) for setting in ("off", "on"))
    assert on["cannot_block_after_events"] < 0.1 * off["cannot_block_after_events"]
    assert on["selects"] < off["selects"]


def test_a_folder_without_strace_files_is_named(tmp_path):
    with pytest.raises(RunError, match=str(tmp_path)):
        select_census.census(tmp_path)


def test_censuses_side_by_side_show_each_ones_counts(censuses, tmp_path):
    for setting, table in censuses.items():
        (tmp_path / setting).mkdir()
        table.to_csv(tmp_path / setting / select_census.CENSUS_TABLE, index=False)
    text = select_census.comparison([tmp_path / "off", tmp_path / "on"])
    header, _, *rows = text.splitlines()
    assert header == "| | `off` | `on` |"
    assert len(rows) == len(select_census.SUMMARY_LABELS)
    off, on = (select_census.summary(censuses[setting]) for setting in ("off", "on"))
    assert rows[0] == f"| {select_census.SUMMARY_LABELS['selects']} | {off['selects']:,} | {on['selects']:,} |"
    assert select_census.comparison([]) is None
