# Study-level tables, figure and report from every validated run.


rule study_config:
    output:
        STUDY_DIR / "study.yaml",
    params:
        resolved=pipeline.cfg.dump_study(STUDY),
    run:
        Path(output[0]).write_text(params.resolved)


rule summarize:
    input:
        study=rules.study_config.output,
        validations=expand(rules.validate.output, run=RUNS),
        traffic=expand(rules.traffic.output, run=RUNS) if STUDY.traffic_capture else [],
    output:
        receipts=STUDY_DIR / "receipts.parquet",
        summary=STUDY_DIR / "latency_summary.csv",
        summary_md=STUDY_DIR / "latency_summary.md",
        runs=STUDY_DIR / "runs.csv",
        points=STUDY_DIR / "points.csv",
        figure=STUDY_DIR / "figures" / "latency_distributions.png",
        sweep_figure=[STUDY_DIR / "figures" / "sweep.png"] if STUDY.sweep else [],
        report=STUDY_DIR / "report.md",
    params:
        runs=expand(RUN_DIR, run=RUNS),
    shell:
        "waku-shadow summarize --study-config {input.study} --out {STUDY_DIR} --runs {params.runs}"


rule report:
    input:
        rules.summarize.output,
        notebook="analysis/study_report.ipynb",
    output:
        notebook=STUDY_DIR / "report.ipynb",
        html=STUDY_DIR / "report.html",
        residuals=STUDY_DIR / "analysis" / "residuals_by_size.csv",
        per_hop=STUDY_DIR / "analysis" / "per_hop.csv",
        figure2=STUDY_DIR / "analysis" / "figure2.png",
    params:
        runs=expand(RUN_DIR, run=RUNS),
        # not an input: the other study runs under its own config; the report says if it is missing
        compare=f"--compare-with {STUDY_DIR.parent / STUDY.compare_with}" if STUDY.compare_with else "",
    shell:
        "waku-shadow report --notebook {input.notebook} --study-dir {STUDY_DIR} --runs {params.runs}"
        " --out-notebook {output.notebook} --out-html {output.html} {params.compare}"
