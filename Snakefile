# waku-shadow: latency studies of real nwaku nodes inside the Shadow network simulator.
#
#   snakemake --cores 2                                   # configs/default.yaml
#   snakemake --cores 64 --configfile configs/paper.yaml  # any study config
#
# Where Shadow and nwaku come from (installed binaries, a local nwaku tree) goes
# in the untracked local.yaml; see configs/local.example.yaml.

from snakemake.utils import min_version

min_version("9.0")


include: "rules/common.smk"
include: "rules/build.smk"
include: "rules/simulate.smk"
include: "rules/analysis.smk"


rule all:
    input:
        rules.summarize.output,
        rules.report.output,
