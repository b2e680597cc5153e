# Study-level tables, figure and report from every validated run.


rule study_config:
    output:
        STUDY_DIR / "study.yaml",
    params:
        resolved=pipeline.cfg.dump_resolved(STUDY),
    run:
        Path(output[0]).write_text(params.resolved)


rule summarize:
    input:
        study=rules.study_config.output,
        validations=expand(rules.validate.output, run=RUNS),
    output:
        receipts=STUDY_DIR / "receipts.parquet",
        summary=STUDY_DIR / "latency_summary.csv",
        summary_md=STUDY_DIR / "latency_summary.md",
        figure=STUDY_DIR / "figures" / "latency_distributions.png",
        report=STUDY_DIR / "report.md",
    params:
        runs=expand(RUN_DIR, run=RUNS),
    shell:
        "waku-shadow summarize --study-config {input.study} --out {STUDY_DIR} --runs {params.runs}"
