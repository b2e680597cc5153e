"""Latency statistics per message size (and swept value), warm-up messages excluded."""

from __future__ import annotations

import itertools

import pandas as pd
from scipy import stats as scipy_stats

SUMMARY_COLUMNS = ["size_bytes", "count", "min", "mean", "p50", "p95", "max"]


def point_at(keys: list[str], point) -> dict:
    """A groupby key of ``keys`` as {key: value} (pandas gives a scalar for one key, a tuple for several)."""
    return dict(zip(keys, point if isinstance(point, tuple) else (point,)))


def measured(table: pd.DataFrame) -> pd.DataFrame:
    """The rows of measured messages: every figure and table is made of these. Warm-up messages
    are published, delivered and validated like the others, but never measured."""
    return table[~table["warmup"].astype(bool)]


def latency_summary(receipts: pd.DataFrame, keys: tuple[str, ...] = ("size_bytes",)) -> pd.DataFrame:
    """count, min, mean, p50, p95 and max of latency in ms per size, or per ``keys`` (a swept
    value and the size), pooling a point's repetitions.

    Percentiles interpolate linearly between order statistics (numpy's default).
    """
    receipts = measured(receipts)
    keys = list(keys)
    grouped = receipts.groupby(keys)["latency_ms"]
    summary = pd.DataFrame(
        {
            "count": grouped.size(),
            "min": grouped.min(),
            "mean": grouped.mean(),
            "p50": grouped.quantile(0.50),
            "p95": grouped.quantile(0.95),
            "max": grouped.max(),
        }
    ).reset_index()
    extra = [k for k in keys if k != "size_bytes"]
    return summary[extra + SUMMARY_COLUMNS].sort_values(keys, ignore_index=True)


def latency_histogram(receipts: pd.DataFrame, keys: tuple[str, ...] = ("size_bytes",), bin_ms: float = 1.0) -> pd.DataFrame:
    """Measured receipts per point, seed and latency to the nearest bin_ms (Shadow's times sit a few ns
    either side of a whole millisecond): keys, seed, latency_ms, receipts. Enough to draw each seed's
    latency ECDF to the bin."""
    binned = measured(receipts).assign(latency_ms=lambda r: (r["latency_ms"] / bin_ms).round() * bin_ms)
    return binned.groupby([*keys, "seed", "latency_ms"]).size().rename("receipts").reset_index()


def compare(ours: pd.DataFrame, other: pd.DataFrame) -> pd.DataFrame:
    """Two studies' summaries side by side for the sizes both have: statistic, ours, other, ours / other."""
    both = ours.merge(other, on="size_bytes", suffixes=("_ours", "_other"))
    rows = [
        {
            "size_bytes": int(row["size_bytes"]),
            "statistic": statistic,
            "ours_ms": row[f"{statistic}_ours"],
            "other_ms": row[f"{statistic}_other"],
        }
        for row in both.to_dict("records")
        for statistic in ("min", "mean", "p50", "p95", "max")
    ]
    table = pd.DataFrame(rows, columns=["size_bytes", "statistic", "ours_ms", "other_ms"])
    table["ratio"] = table["ours_ms"] / table["other_ms"]
    return table


KS_SHIFTS = {"minus_1ms": -1.0, "plus_1ms": 1.0}  # distribution_distances' sensitivity to a millisecond


def distribution_distances(ours: pd.DataFrame, reference: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """How far our latency distribution is from a reference's, per group of ``ours`` by ``keys``
    (which include size_bytes) whose size the reference has; warm-up receipts left out of both.

    ks: the Kolmogorov–Smirnov distance, the largest vertical gap between the two ECDFs (0 to 1).
    ks_minus_1ms, ks_plus_1ms: the same with ours moved 1 ms earlier or later: where one of them is
    far below ks, the gap is a millisecond's offset of steps both distributions share, not their shape.
    wasserstein_ms: the area between the two ECDFs, how far (ms) latency must move on average to
    turn one distribution into the other.
    """
    ours, reference = measured(ours), measured(reference)
    rows = []
    for point, group in ours.groupby(keys):
        at = point_at(keys, point)
        other = reference.loc[reference["size_bytes"] == at["size_bytes"], "latency_ms"]
        if other.empty:
            continue
        latency = group["latency_ms"]
        rows.append({
            **at,
            "ks": scipy_stats.ks_2samp(latency, other).statistic,
            **{f"ks_{name}": scipy_stats.ks_2samp(latency + shift_ms, other).statistic for name, shift_ms in KS_SHIFTS.items()},
            "wasserstein_ms": scipy_stats.wasserstein_distance(latency, other),
            "ours_n": len(group),
            "reference_n": len(other),
        })
    return pd.DataFrame(rows, columns=[*keys, "ks", *(f"ks_{name}" for name in KS_SHIFTS), "wasserstein_ms", "ours_n",
                                       "reference_n"])



def largest_distance_between(receipts: pd.DataFrame, keys: list[str], between: str = "seed") -> pd.DataFrame:
    """Per group of ``keys``, the largest KS distance between the latency distributions of any two
    values of ``between`` (the seeds of a point: how far apart the draws alone put them); warm-up
    left out; a group with one value has none. Columns: keys, ks_between."""
    rows = []
    for point, group in measured(receipts).groupby(keys):
        samples = [g["latency_ms"] for _, g in group.groupby(between)]
        if len(samples) < 2:
            continue
        pairs = itertools.combinations(samples, 2)
        rows.append({**point_at(keys, point),
                     "ks_between": max(scipy_stats.ks_2samp(a, b).statistic for a, b in pairs)})
    return pd.DataFrame(rows, columns=[*keys, "ks_between"])


def fit_line(x: pd.Series, y: pd.Series) -> dict:
    """Least-squares y = slope x + intercept, with R²."""
    fit = scipy_stats.linregress(x, y)
    return {"slope": float(fit.slope), "intercept": float(fit.intercept), "r2": float(fit.rvalue**2)}
