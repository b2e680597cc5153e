import shlex
from pathlib import Path

from waku_shadow import pipeline, stack
from waku_shadow.shadow_config import SHADOW_CONFIG

# Validated before any rule runs: a bad key or value stops here, naming it.
STUDY = pipeline.study_from_snakemake(config)
STUDY_DIR = pipeline.study_dir(STUDY)
RUNS = STUDY.run_ids()
RUN_DIR = str(STUDY_DIR / "runs" / "{run}")
BUILD_DIR = Path(STUDY.resources.build_dir)
PATCHES = [str(p.relative_to(pipeline.cfg.REPO_ROOT)) for p in stack.patches(STUDY.stack.nwaku_tag)]
SHADOW_PATCHES = [str(p.relative_to(pipeline.cfg.REPO_ROOT)) for p in stack.shadow_patches()]

SHADOW_DIR = pipeline.shadow_build_dir(STUDY)
SHADOW = STUDY.stack.shadow_binary or str(SHADOW_DIR / "bin" / "shadow")
if STUDY.stack.nwaku_binary:
    NWAKU_DIR = BUILD_DIR / "nwaku" / "prebuilt"
    WAKUNODE2 = STUDY.stack.nwaku_binary
else:
    NWAKU_DIR = pipeline.nwaku_build_dir(STUDY)
    WAKUNODE2 = str(NWAKU_DIR / "wakunode2")
NWAKU_IDENTITY = str(NWAKU_DIR / "identity.json")


wildcard_constraints:
    run=r"([a-z_]+\d+-)?n\d+-size\d+B-seed\d+",
