"""The studies behind the paper's figures and tables (``snakemake paper``), and where they are gathered."""

from __future__ import annotations

from pathlib import Path

from waku_shadow import layout
from waku_shadow.errors import ConfigError

# The studies behind the paper's figures and tables (`snakemake paper`), by their configs/ names.
PAPER_STUDIES = ("paper", "paper-calibrated", "multihost")
PAPER_FIGURES = "paper-figures"


def reports(study_dirs: list[Path], refused: dict[str, str]) -> list[Path]:
    """The report of each paper study (sources.shipped_studies); refused, naming why, when the
    workflow's stack cannot run one of them."""
    if refused:
        raise ConfigError("the paper's studies cannot run on this stack: "
                          + "; ".join(f"{name}: {why}" for name, why in refused.items()))
    return [study_dir / layout.REPORT_HTML for study_dir in study_dirs]
