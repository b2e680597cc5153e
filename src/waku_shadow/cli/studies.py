"""The commands of one study, over its validated runs: its summary, its analysis and its report notebook."""

from __future__ import annotations

from pathlib import Path

from waku_shadow import layout
from waku_shadow.configuration import loader

KERNEL_START_TIMEOUT_S = 600  # s; papermill waits 60 s for a notebook's kernel


def cmd_summarize(args) -> None:
    from waku_shadow.analyse import load_study, scaling
    from waku_shadow.paper.study_results import StudyResults
    from waku_shadow.report import plots, study_analysis, study_report, tables

    study = loader.load(args.study_config)
    out = Path(args.out)
    results = StudyResults(study, [Path(d) for d in args.runs])
    results.receipts.to_parquet(out / layout.STUDY_RECEIPTS, index=False)
    results.summary.to_csv(out / layout.LATENCY_SUMMARY, index=False, float_format="%.3f")
    (out / layout.LATENCY_SUMMARY_MD).write_text(tables.latency_summary(results.summary).markdown())
    results.runs.to_csv(out / layout.RUNS_TABLE, index=False, float_format="%.6g")
    results.points.to_csv(out / layout.POINTS_TABLE, index=False, float_format="%.6g")
    study_analysis.figure3(results, out / layout.LATENCY_FIGURE)
    if study.sweep:
        model_lines = scaling.model_lines(study) if scaling.is_nodes_sweep(study) else None
        plots.sweep_tradeoff(results.points, study.sweep.name, out / layout.SWEEP_FIGURE, model_lines)
    knees = None
    if load_study.is_load_study(study):
        load_points = load_study.load_points(results.runs, study)
        knees = load_study.knees(load_points)
        load_points.to_csv(out / layout.LOAD_TABLE, index=False, float_format="%.6g")
        knees.to_csv(out / layout.KNEES_TABLE, index=False, float_format="%.6g")
        plots.load_curves(load_points, knees, out / layout.LOAD_FIGURE)
    (out / layout.REPORT_MD).write_text(study_report.study_report(results, knees))


def cmd_analyse(args) -> None:
    """Every table and figure of the study's analysis/ folder (study_analysis.outputs names them)."""
    from waku_shadow.paper.study_results import StudyResults
    from waku_shadow.report import study_analysis

    study_dir = Path(args.study_dir)
    results = StudyResults(loader.load(study_dir / layout.STUDY_CONFIG), [Path(d) for d in args.runs])
    study_analysis.write(results, study_dir / layout.ANALYSIS, args.compare_with)


def cmd_report(args) -> None:
    """Execute the analysis notebook for a study and render it as one self-contained HTML file."""
    import nbformat
    import papermill
    from nbconvert import HTMLExporter

    out = Path(args.out_notebook)
    papermill.execute_notebook(
        args.notebook,
        str(out),
        parameters={"study_dir": args.study_dir, "compare_with": args.compare_with or ""},
        kernel_name="python3",
        # beside simulations on every core the kernel may take longer than papermill's 60 s to answer
        start_timeout=KERNEL_START_TIMEOUT_S,
        progress_bar=False,
        cwd=str(Path.cwd()),
    )
    exporter = HTMLExporter(exclude_input=True, require_js_url="", mathjax_url="")
    html, _ = exporter.from_notebook_node(nbformat.read(out, as_version=4))
    Path(args.out_html).write_text(html)
