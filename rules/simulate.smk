# One Shadow run per point: render its folder, run it, parse and validate its logs.


rule render:
    input:
        wakunode2=built(WAKUNODE2),
        identity=built(NWAKU_IDENTITY),
        shadow=built(SHADOW),
    output:
        shadow_config=run_file(layout.SHADOW_CONFIG),
        run_config=run_file(layout.RUN_CONFIG),
        schedule=run_file(layout.SCHEDULE),
        identities=run_file(layout.IDENTITIES),
        links=run_file(layout.LINKS),
        churn=run_file(layout.CHURN),
        graph=run_file(layout.NETWORK_GRAPH),
        messages=directory(run_file(layout.MESSAGES)),
        provenance=run_file(layout.PROVENANCE),
    params:
        run_dir=RUN_DIR,
        # the run's study config only: machine settings reach the job through the environment
        config=lambda w: shlex.quote(sources.run_config_json(STUDY, w.run)),
    log:
        job_log("render"),
    shell:
        "waku-shadow render --run-dir {params.run_dir} --config-json {params.config}"
        " --wakunode2 {input.wakunode2} --nwaku-identity {input.identity} --shadow {input.shadow} 2> {log}"


rule simulate:
    input:
        rules.render.output,
        shadow=built(SHADOW),
    output:
        stats=run_file(layout.RUN_STATS),
        logs=directory(run_file(layout.LOGS)),
    params:
        run_dir=RUN_DIR,
    log:
        job_log("simulate"),
    # What the cost law predicts for the run: Snakemake starts as many runs at once as --cores and
    # --resources mem_mb allow, and Slurm gets them as --cpus-per-task, --mem and --time.
    threads: lambda w: run_needs(w.run).threads
    resources:
        mem_mb=lambda w: run_needs(w.run).mem_mb,
        runtime=lambda w: run_needs(w.run).runtime_min,
    shell:
        "waku-shadow simulate --run-dir {params.run_dir} --shadow {input.shadow}"
        " --parallelism {threads} --memory-budget-mb {resources.mem_mb} 2> {log}"


rule parse:
    input:
        rules.simulate.output,
        rules.render.output.identities,
        rules.render.output.schedule,
    output:
        receipts=run_file(layout.RECEIPTS),
        publishes=run_file(layout.PUBLISHES),
        sends=run_file(layout.SENDS),
        receipts_again=run_file(layout.RECEIPTS_AGAIN),
        spam_receipts=run_file(layout.SPAM_RECEIPTS),
        rln_events=run_file(layout.RLN_EVENTS),
        withheld=run_file(layout.WITHHELD),
        **({"filter_receipts": run_file(layout.FILTER_RECEIPTS), "lightpushes": run_file(layout.LIGHTPUSHES),
            "store_queries": run_file(layout.STORE_QUERIES), "store_returns": run_file(layout.STORE_RETURNS)}
           if STUDY.light_clients.active else {}),
        **({"topology_events": run_file(layout.TOPOLOGY_EVENTS)} if STUDY.discovery else {}),
    params:
        run_dir=RUN_DIR,
    log:
        job_log("parse"),
    shell:
        "waku-shadow parse --run-dir {params.run_dir} 2> {log}"


rule validate:
    input:
        rules.parse.output,
        rules.simulate.output,
        rules.render.output.run_config,
        rules.render.output.identities,
        rules.render.output.schedule,
        rules.render.output.churn,
    output:
        run_file(layout.VALIDATION),
    params:
        run_dir=RUN_DIR,
    log:
        job_log("validate"),
    shell:
        "waku-shadow validate --run-dir {params.run_dir} 2> {log}"


rule traffic:
    input:
        rules.simulate.output,
        rules.parse.output,
        rules.render.output.run_config,
        rules.render.output.identities,
    output:
        traffic=run_file(layout.TRAFFIC),
        amplification=run_file(layout.AMPLIFICATION),
    params:
        run_dir=RUN_DIR,
    log:
        job_log("traffic"),
    shell:
        "waku-shadow traffic --run-dir {params.run_dir} 2> {log}"
