# Study-level tables, figures and report from every validated run.


# quick, and reading every run: where snakemake runs, not as cluster jobs
localrules:
    study_config,
    summarize,
    analyse,
    report,


rule study_config:
    output:
        STUDY_DIR / layout.STUDY_CONFIG,
    params:
        resolved=loader.dump_study(STUDY),
    log:
        STUDY_DIR / layout.JOB_LOGS / "study_config.log",
    run:
        Path(output[0]).write_text(params.resolved)


# what summarize and analyse read of every run
RUN_RESULTS = [
    layout.RUN_CONFIG, layout.PROVENANCE, layout.IDENTITIES, layout.RUN_STATS,
    layout.RECEIPTS, layout.PUBLISHES, layout.SENDS, layout.VALIDATION, layout.CHURN,
] + ([layout.TRAFFIC, layout.AMPLIFICATION] if STUDY.traffic_capture else []) + (
    [layout.SCHEDULE, layout.LINKS, layout.SPAM_RECEIPTS, layout.RLN_EVENTS] if STUDY.spam.spammers else []
) + ([layout.SCHEDULE, layout.FILTER_RECEIPTS, layout.LIGHTPUSHES, layout.STORE_QUERIES, layout.STORE_RETURNS]
       if STUDY.light_clients.active else []) + ([layout.TOPOLOGY_EVENTS] if STUDY.discovery else [])


rule summarize:
    input:
        study=rules.study_config.output,
        runs=[every_run(name) for name in RUN_RESULTS],
    output:
        receipts=STUDY_DIR / layout.STUDY_RECEIPTS,
        summary=STUDY_DIR / layout.LATENCY_SUMMARY,
        summary_md=STUDY_DIR / layout.LATENCY_SUMMARY_MD,
        runs=STUDY_DIR / layout.RUNS_TABLE,
        points=STUDY_DIR / layout.POINTS_TABLE,
        figure=STUDY_DIR / layout.LATENCY_FIGURE,
        sweep_figure=[STUDY_DIR / layout.SWEEP_FIGURE] if STUDY.sweep else [],
        load=[STUDY_DIR / name for name in (layout.LOAD_TABLE, layout.KNEES_TABLE, layout.LOAD_FIGURE)]
        if load_study.is_load_study(STUDY) else [],
        report=STUDY_DIR / layout.REPORT_MD,
    params:
        runs=expand(RUN_DIR, run=RUNS),
        study_dir=lambda w, output: Path(output.report).parent,
    log:
        STUDY_DIR / layout.JOB_LOGS / "summarize.log",
    shell:
        "waku-shadow summarize --study-config {input.study} --out {params.study_dir} --runs {params.runs} 2> {log}"


# not an input: the other study runs under its own config; analyse and the report say if it has no results
COMPARE_WITH = f"--compare-with {STUDY_DIR.parent / STUDY.compare_with}" if STUDY.compare_with else ""


# every table and figure of analysis/, each file declared (study_analysis.outputs: which this study has)
rule analyse:
    input:
        study=rules.study_config.output,
        runs=[every_run(name) for name in RUN_RESULTS],
    output:
        [STUDY_DIR / layout.ANALYSIS / name for name in study_analysis.outputs(STUDY, STUDY.compare_with)],
    params:
        runs=expand(RUN_DIR, run=RUNS),
        compare=COMPARE_WITH,
        study_dir=lambda w, output: Path(output[0]).parent.parent,
    log:
        STUDY_DIR / layout.JOB_LOGS / "analyse.log",
    shell:
        "waku-shadow analyse --study-dir {params.study_dir} --runs {params.runs} {params.compare} 2> {log}"


# the notebook shows what summarize and analyse wrote, and reads nothing else
rule report:
    input:
        rules.summarize.output,
        rules.analyse.output,
        study=rules.study_config.output,
        notebook=checkout.path("analysis/study_report.ipynb"),
    output:
        notebook=STUDY_DIR / layout.REPORT_NOTEBOOK,
        html=STUDY_DIR / layout.REPORT_HTML,
    params:
        compare=COMPARE_WITH,
        study_dir=lambda w, output: Path(output.html).parent,
    log:
        STUDY_DIR / layout.JOB_LOGS / "report.log",
    shell:
        "waku-shadow report --notebook {input.notebook} --study-dir {params.study_dir}"
        " --out-notebook {output.notebook} --out-html {output.html} {params.compare} 2> {log}"
