"""The one renderer of every table (report/tables.py): markdown in the docs' style, and HTML."""

import math

import pandas as pd
import pytest

from waku_shadow.report import tables


def test_markdown_is_the_docs_style_and_html_the_same_cells():
    table = tables.table([["2 KB", "356 / 357 (1.00)", ""], ["25 KB", "a < b", "7"]], ["size", "min", "size"], "lrr")
    assert table.markdown() == (
        "| size | min | size |\n"
        "|---|---:|---:|\n"
        "| 2 KB | 356 / 357 (1.00) |  |\n"  # a blank cell, as the docs' blocks write it
        "| 25 KB | a < b | 7 |\n"
    )
    html = table.html()
    assert html.count("<th>size</th>") == 2 and "<td>356 / 357 (1.00)</td>" in html and "<td>a &lt; b</td>" in html


def test_an_alignment_that_does_not_fit_is_refused():
    with pytest.raises(ValueError, match="does not fit"):
        tables.table([["a", "b"]], ["x", "y"], "l")
    with pytest.raises(ValueError, match="does not fit"):
        tables.table([["a"]], ["x"], "c")


def test_a_table_without_rows_is_its_header():
    assert tables.table([], ["run", "wall time"], "lr").markdown() == "| run | wall time |\n|---|---:|\n"


def test_blank_for_what_is_not_there():
    assert [tables.number(v, "{:.1f} s") for v in (None, math.nan, pd.NA, 2.34)] == ["", "", "", "2.3 s"]


def test_points_write_the_interval_only_with_repetitions():
    wide = pd.DataFrame({"d": [2, 5], "size_bytes": [4000, 4000], "latency_mean_ms": [243.61, 241.4],
                         "latency_mean_ms ±": [25.3, math.nan]})
    assert tables.points(wide, ["d", "size_bytes"], ["latency_mean_ms"]).markdown().splitlines() == [
        "| d | size | latency_mean_ms |", "|---:|---:|---:|", "| 2 | 4 KB | 243.6 ± 25 |", "| 5 | 4 KB | 241.4 |"]


def test_table3_in_the_papers_layout():
    rows = [(size, component, start, end, paper, ours) for size, scale in ((2000, 1), (500000, 2))
            for component, start, end, paper, ours in (("L_g", "Singapore", "", 236, 277), ("L_t", "Singapore", "Bangalore", 38, 31),
                                                       ("L_v", "", "Bangalore", 6, 7))]
    comparison = pd.DataFrame(rows, columns=["size_bytes", "component", "from", "to", "paper_ms", "ours_ms"])
    comparison.loc[comparison["size_bytes"] == 500000, "ours_ms"] *= 2
    comparison["ratio"] = comparison["ours_ms"] / comparison["paper_ms"]
    assert tables.table3(comparison).markdown().splitlines() == [
        "| component | link | 2 KB | 500 KB |", "|---|---|---:|---:|",
        "| L_g | Singapore | 236 / 277 (1.17) | 236 / 554 (2.35) |",
        "| L_t | Singapore → Bangalore | 38 / 31 (0.82) | 38 / 62 (1.63) |",
        "| L_v | Bangalore | 6 / 7 (1.17) | 6 / 14 (2.33) |",
    ]
