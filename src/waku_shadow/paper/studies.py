"""The studies behind the paper's figures and tables (``snakemake paper``), and where they are gathered."""

from __future__ import annotations

# The studies behind the paper's figures and tables (`snakemake paper`), by their configs/ names.
PAPER_STUDIES = ("paper", "paper-calibrated", "multihost")
PAPER_FIGURES = "paper-figures"
