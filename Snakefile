# waku-shadow: latency studies of real nwaku nodes inside the Shadow network simulator.
#
#   snakemake --cores 2                                   # configs/default.yaml
#   snakemake --cores 64 --configfile configs/paper.yaml  # any study config
#   snakemake --cores 64 paper                            # every figure and table of the paper
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
