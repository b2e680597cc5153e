import pandas as pd
import pytest

from waku_shadow import paper


def test_table5_is_the_papers():
    table = paper.table5()
    sh = table[table["setup"] == "s-h"].set_index(["size_bytes", "statistic"])["latency_ms"]
    assert sh[(2000, "min")] == 356 and sh[(500000, "p95")] == 1665 and sh[(25000, "mean")] == 756
    assert len(table[table["setup"] == "m-h"]) == 8


def test_comparison_ratios_and_markdown():
    summary = pd.DataFrame(
        {"size_bytes": [2000, 10000], "count": [9990, 9990], "min": [312.0, 1.0], "mean": [497.0, 1.0],
         "p50": [0.0, 0.0], "p95": [597.0 * 2, 1.0], "max": [302.0, 1.0]}
    )
    table = paper.table5_comparison(summary)
    assert set(table["size_bytes"]) == {2000}  # 10 KB is not in Table 5
    ratios = table.set_index("statistic")["ratio"]
    assert ratios["mean"] == 1.0 and ratios["p95"] == 2.0 and ratios["max"] == pytest.approx(0.5)
    text = paper.table5_markdown(table)
    assert "| 2 KB | 356 / 312 (0.88) | 497 / 497 (1.00) | 597 / 1194 (2.00) | 604 / 302 (0.50) |" in text
