"""A release verdict: per metric and point, is a candidate build higher, lower or the same as a base
build, run on the same networks at the same seeds?

The rule, stated once: for each seed both builds ran, the difference candidate − base; the 95 %
confidence interval of the mean difference over seeds (Student's t); and a practical-equivalence
margin, a share of the base's mean (MARGINS). The verdict is

- **same** when the whole interval lies within ± the margin (equivalent in practice);
- **higher** / **lower** when the whole interval lies above / below zero, outside that;
- **undecided** otherwise: the seeds do not settle it; more seeds narrow the interval.

A simulation is deterministic, so on every simulated metric a build against itself differs by exactly
zero on every seed and is the same; one seed gives no interval, and is the same only when identical.
The cost metrics (COST_METRICS) are the machine's as much as the build's: the page shows them apart.
"""

from __future__ import annotations

import math

import pandas as pd
from scipy.stats import t as student_t

# metric -> the practical-equivalence margin, a share of the base's mean
MARGINS = {
    "latency_p50_ms": 0.01, "latency_p95_ms": 0.01, "latency_max_ms": 0.02, "delivery": 0.001,
    "hops_mean": 0.02, "relay_copies": 0.02, "duplicates_per_receiver": 0.02, "net_bytes_per_message": 0.01,
    "amplification": 0.01, "wall_s": 0.10, "peak_memory_gib": 0.05,
}
COST_METRICS = ("wall_s", "peak_memory_gib")
SAME, HIGHER, LOWER, UNDECIDED = "same", "higher", "lower", "undecided"
CONFIDENCE = 0.95


def interval(differences: pd.Series) -> tuple[float, float]:
    """The CONFIDENCE interval of the mean of per-seed differences; (nan, nan) for one seed, unless it is zero."""
    n, mean = len(differences), differences.mean()
    if n < 2:
        return (0.0, 0.0) if mean == 0 else (math.nan, math.nan)
    half = student_t.ppf((1 + CONFIDENCE) / 2, n - 1) * differences.std(ddof=1) / math.sqrt(n)
    return mean - half, mean + half


def verdict(low: float, high: float, margin: float) -> str:
    if math.isnan(low):
        return UNDECIDED
    if -margin <= low and high <= margin:
        return SAME
    if low > 0:
        return HIGHER
    if high < 0:
        return LOWER
    return UNDECIDED


def compare(base: pd.DataFrame, candidate: pd.DataFrame, keys: list[str],
            margins: dict[str, float] | None = None) -> pd.DataFrame:
    """Base and candidate runs tables (a row per run: keys, seed and metrics) paired on keys and seed.
    Tidy: keys, metric, seeds, base, candidate (means over the paired seeds), difference, ci_low,
    ci_high, margin, verdict. Metrics of margins that either table lacks, and runs without a partner,
    are left out; a pairing with no seed in common is refused."""
    margins = margins or MARGINS
    paired = base.merge(candidate, on=[*keys, "seed"], suffixes=("_base", "_candidate"))
    if paired.empty:
        raise ValueError(f"the base and the candidate share no run (the same {', '.join(keys)} and seed)")
    rows = []
    for metric, share in margins.items():
        if metric not in base or metric not in candidate:
            continue
        for point, group in paired.groupby(keys):
            values = group[[f"{metric}_base", f"{metric}_candidate"]].dropna()
            if values.empty:
                continue
            differences = values[f"{metric}_candidate"] - values[f"{metric}_base"]
            base_mean = values[f"{metric}_base"].mean()
            low, high = interval(differences)
            margin = share * abs(base_mean)
            rows.append({**dict(zip(keys, point if isinstance(point, tuple) else (point,))), "metric": metric,
                         "seeds": len(values), "base": base_mean, "candidate": values[f"{metric}_candidate"].mean(),
                         "difference": differences.mean(), "ci_low": low, "ci_high": high, "margin": margin,
                         "verdict": verdict(low, high, margin)})
    return pd.DataFrame(rows)
