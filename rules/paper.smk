# `snakemake paper`: every study behind the paper's figures and tables (studies.PAPER_STUDIES),
# each with its own runs and report, and one folder, results/paper-figures/, that gathers the
# figures and tables beside the paper's with the provenance of every run. The study the
# Snakefile was given brings its own rules; the others come from rules/study.smk as modules.
# With --keep-going, the folder is written from the validated runs even when some fail (onerror).

# a study the given stack cannot run (its build lacks a patch the study's settings need) is left out,
# and `paper` alone stops, naming it
PAPER_RESOLVED, PAPER_REFUSED = sources.shipped_studies(studies.PAPER_STUDIES, workflow.config_settings)
PAPER_CONFIGS = {name: shipped for name, (shipped, _) in PAPER_RESOLVED.items()}
PAPER_STUDY_DIRS = [sources.study_dir(study) for _, study in PAPER_RESOLVED.values()]
PAPER_STUDY_FILES = [study_dir / layout.STUDY_CONFIG for study_dir in PAPER_STUDY_DIRS]
PAPER_FIGURES = Path(STUDY.resources.results_dir) / studies.PAPER_FIGURES

if STUDY.name != "paper" and "paper" in PAPER_CONFIGS:

    module paper_study:
        snakefile:
            "study.smk"
        config:
            PAPER_CONFIGS["paper"]

    use rule * from paper_study exclude build_shadow, build_nwaku, identify_prebuilt_nwaku as paper_*


if STUDY.name != "paper-calibrated" and "paper-calibrated" in PAPER_CONFIGS:

    module paper_calibrated_study:
        snakefile:
            "study.smk"
        config:
            PAPER_CONFIGS["paper-calibrated"]

    use rule * from paper_calibrated_study exclude build_shadow, build_nwaku, identify_prebuilt_nwaku as paper_calibrated_*


if STUDY.name != "multihost" and "multihost" in PAPER_CONFIGS:

    module multihost_study:
        snakefile:
            "study.smk"
        config:
            PAPER_CONFIGS["multihost"]

    use rule * from multihost_study exclude build_shadow, build_nwaku, identify_prebuilt_nwaku as multihost_*


PAPER_PAGE = f"waku-shadow paper-page --studies {' '.join(map(str, PAPER_STUDY_FILES))} --out {PAPER_FIGURES}"


localrules:
    paper,


rule paper:
    input:
        # each study's report, so each study's runs: the page reads the runs themselves
        lambda wildcards: studies.reports(PAPER_STUDY_DIRS, PAPER_REFUSED),
    output:
        directory(PAPER_FIGURES),
    log:
        Path(STUDY.resources.results_dir) / "logs" / "paper.log",
    shell:
        f"{PAPER_PAGE} 2> {{log}}"


onerror:
    if "paper" in workflow.dag_settings.targets and all(path.exists() for path in PAPER_STUDY_FILES):
        shell(PAPER_PAGE)
