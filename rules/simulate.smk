# One Shadow run per message size: render its folder, run it, parse and validate its logs.


rule render:
    input:
        wakunode2=WAKUNODE2,
        identity=NWAKU_IDENTITY,
        shadow=SHADOW,
    output:
        shadow_config=f"{RUN_DIR}/{SHADOW_CONFIG}",
        run_config=f"{RUN_DIR}/config.yaml",
        schedule=f"{RUN_DIR}/schedule.csv",
        identities=f"{RUN_DIR}/identities.csv",
        provenance=f"{RUN_DIR}/provenance.json",
    params:
        run_dir=RUN_DIR,
        config=lambda w: shlex.quote(pipeline.run_config_json(STUDY, w.run)),
    shell:
        "waku-shadow render --run-dir {params.run_dir} --config-json {params.config}"
        " --wakunode2 {input.wakunode2} --nwaku-identity {input.identity} --shadow {input.shadow}"


rule simulate:
    input:
        rules.render.output.shadow_config,
        shadow=SHADOW,
    output:
        stats=f"{RUN_DIR}/run_stats.json",
        logs=directory(f"{RUN_DIR}/logs"),
    params:
        run_dir=RUN_DIR,
    # Shadow uses every core it is given; runs go one at a time.
    threads: workflow.cores
    shell:
        "waku-shadow simulate --run-dir {params.run_dir} --shadow {input.shadow}"


rule parse:
    input:
        rules.simulate.output.stats,
        rules.simulate.output.logs,
    output:
        receipts=f"{RUN_DIR}/receipts.parquet",
        publishes=f"{RUN_DIR}/publishes.parquet",
        sends=f"{RUN_DIR}/sends.parquet",
    params:
        run_dir=RUN_DIR,
    shell:
        "waku-shadow parse --run-dir {params.run_dir}"


rule validate:
    input:
        rules.parse.output,
    output:
        f"{RUN_DIR}/validation.json",
    params:
        run_dir=RUN_DIR,
    shell:
        "waku-shadow validate --run-dir {params.run_dir}"


rule traffic:
    input:
        rules.simulate.output.logs,
        rules.parse.output,
    output:
        traffic=f"{RUN_DIR}/traffic.parquet",
        amplification=f"{RUN_DIR}/amplification.parquet",
    params:
        run_dir=RUN_DIR,
    shell:
        "waku-shadow traffic --run-dir {params.run_dir}"
