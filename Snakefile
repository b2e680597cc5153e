# waku-shadow: latency studies of real nwaku nodes inside the Shadow network simulator.
#
#   snakemake --cores 2                                   # configs/default.yaml
#   snakemake --cores 64 --configfile configs/paper.yaml  # any study config
#   snakemake --cores 64 paper                            # every figure and table of the paper
#   snakemake --cores 64 signoff --config 'signoff={base: v0.38.1, candidate: master-69fbffa3a}'
#
# Where Shadow and nwaku come from (installed binaries, a local nwaku tree) goes
# in the untracked local.yaml; see configs/local.example.yaml.

from snakemake.utils import min_version

min_version("9.0")


include: "rules/study.smk"


localrules:
    all,


rule all:
    default_target: True
    input:
        rules.summarize.output,
        rules.report.output,


include: "rules/paper.smk"


try:
    SIGNOFF_SIDES = signoff_config.sides(workflow.config_settings)
except WakuShadowError as exc:
    sys.exit(f"waku-shadow: {exc}")

if SIGNOFF_SIDES:

    include: "rules/signoff.smk"
