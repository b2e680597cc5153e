# `snakemake --cores N signoff --config 'signoff={base: v0.38.1, candidate: master-69fbffa3a}'`: the
# battery (configs/signoff.yaml) on each build, as study signoff-<build> with its own runs and report,
# then one page, results/signoff/<candidate>-vs-<base>/, with a verdict per metric (analyse/signoff.py).
# A side whose build is the one the Snakefile's own study makes takes that study's build rule.

SIGNOFF_BASE, SIGNOFF_CANDIDATE = SIGNOFF_SIDES
SIGNOFF_CONFIGS = {side.role: signoff_config.study_config(side, workflow.config_settings) for side in SIGNOFF_SIDES}
SIGNOFF_STUDIES = {role: sources.study_from_snakemake(c) for role, c in SIGNOFF_CONFIGS.items()}
SIGNOFF_OWN_BUILD = {role: builds.nwaku_build_dir(s) != NWAKU_DIR for role, s in SIGNOFF_STUDIES.items()}
SIGNOFF_PAGE = Path(STUDY.resources.results_dir) / SIGNOFF_BASE.battery_name / f"{SIGNOFF_CANDIDATE.label}-vs-{SIGNOFF_BASE.label}"


module signoff_base_study:
    snakefile:
        "study.smk"
    config:
        SIGNOFF_CONFIGS["base"]


module signoff_candidate_study:
    snakefile:
        "study.smk"
    config:
        SIGNOFF_CONFIGS["candidate"]


if SIGNOFF_OWN_BUILD["base"]:

    use rule * from signoff_base_study exclude build_shadow as signoff_base_*

else:

    use rule * from signoff_base_study exclude build_shadow, build_nwaku, identify_prebuilt_nwaku as signoff_base_*


if SIGNOFF_OWN_BUILD["candidate"]:

    use rule * from signoff_candidate_study exclude build_shadow as signoff_candidate_*

else:

    use rule * from signoff_candidate_study exclude build_shadow, build_nwaku, identify_prebuilt_nwaku as signoff_candidate_*


localrules:
    signoff,


rule signoff:
    input:
        [sources.study_dir(s) / layout.REPORT_HTML for s in SIGNOFF_STUDIES.values()],
    output:
        directory(SIGNOFF_PAGE),
    params:
        base=sources.study_dir(SIGNOFF_STUDIES["base"]),
        candidate=sources.study_dir(SIGNOFF_STUDIES["candidate"]),
    log:
        Path(STUDY.resources.results_dir) / "logs" / f"signoff-{SIGNOFF_PAGE.name}.log",
    shell:
        f"waku-shadow signoff --base {{params.base}} --candidate {{params.candidate}} --base-label {SIGNOFF_BASE.label}"
        f" --candidate-label {SIGNOFF_CANDIDATE.label} --out {{output}} 2> {{log}}"
