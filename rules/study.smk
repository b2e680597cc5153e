# One study: its build, its runs and its report. The Snakefile runs the study it is given;
# rules/paper.smk uses this file once more, as a module, for each study the paper needs.


include: "common.smk"
include: "build.smk"
include: "simulate.smk"
include: "analysis.smk"
