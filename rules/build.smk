# Shadow and nwaku at their pinned tags, unless local.yaml names installed ones. A build folder is
# named after everything that makes the build (tag, patches, flags), so once its files are there it is
# final: its rule is left out, and a change to the rule's own command or to a machine setting that
# is no part of the name (path_prepend, a source tree's path) rebuilds nothing. (Snakemake would
# otherwise rerun the build for that change and, behind an `ancient` input, drop every run it feeds,
# even a run not made yet: the study would end after the build.) Delete a folder to rebuild it.

if not STUDY.stack.shadow_binary and not finished_build(SHADOW):

    rule build_shadow:
        input:
            patches=SHADOW_PATCHES,
        output:
            SHADOW,
        params:
            repository=STUDY.stack.shadow_repository,
            tag=STUDY.stack.shadow_tag,
            prefix=str(SHADOW_DIR),
        log:
            str(BUILD_DIR / "logs" / f"shadow-{SHADOW_DIR.name}.log"),
        threads: BUILD_THREADS
        # measured here: Shadow 13 min and 0.8 GiB, nwaku 9-15 min and 2.4 GiB on 2 cores
        resources:
            mem_mb=4096,
            runtime=60,
        shell:
            "{workflow.basedir}/scripts/build_shadow.sh {params.repository} {params.tag} {params.prefix} {input.patches} > {log} 2>&1"


if STUDY.stack.nwaku_binary:

    rule identify_prebuilt_nwaku:
        input:
            WAKUNODE2,
        output:
            NWAKU_IDENTITY,
        params:
            tag=STUDY.stack.nwaku_tag,
        log:
            str(NWAKU_DIR / "identify.log"),
        shell:
            "waku-shadow identify-nwaku --prebuilt --binary {input} --tag {params.tag}"
            " --built-from 'prebuilt: {input}' --out {output} 2> {log}"

elif not finished_build(WAKUNODE2, NWAKU_IDENTITY):

    rule build_nwaku:
        input:
            patches=PATCHES,
        output:
            wakunode2=WAKUNODE2,
            identity=NWAKU_IDENTITY,
        params:
            # quoted here: Snakemake's :q turns an empty value into no argument at all
            source=f"--source {shlex.quote(STUDY.stack.nwaku_source)}" if STUDY.stack.nwaku_source else "",
            built_from=shlex.quote(STUDY.stack.nwaku_source or f"{STUDY.stack.nwaku_repository} {STUDY.stack.nwaku_tag}"),
            repository=STUDY.stack.nwaku_repository,
            tag=STUDY.stack.nwaku_tag,
            patch_tiers=STUDY.stack.nwaku_patches,
            out=str(NWAKU_DIR),
            make_flags="\n".join(STUDY.stack.nwaku_make_flags),
            memory_manager=STUDY.stack.nwaku_memory_manager,
            allocator=STUDY.stack.nwaku_allocator,
            path_prepend=":".join(STUDY.stack.nwaku_path_prepend),
            make_flag_args=" ".join(f"--make-flag={shlex.quote(f)}" for f in STUDY.stack.nwaku_make_flags),  # = : a flag may start with -
        log:
            str(NWAKU_DIR / "build.log"),
        threads: BUILD_THREADS
        # measured here: Shadow 13 min and 0.8 GiB, nwaku 9-15 min and 2.4 GiB on 2 cores
        resources:
            mem_mb=4096,
            runtime=60,
        shell:
            "NWAKU_MAKE_FLAGS={params.make_flags:q} NWAKU_PATH_PREPEND={params.path_prepend:q}"
            " NWAKU_MEMORY_MANAGER={params.memory_manager} NWAKU_ALLOCATOR={params.allocator}"
            " {workflow.basedir}/scripts/build_nwaku.sh {params.source} {params.repository} {params.tag} {params.out} {input.patches}"
            " > {log} 2>&1"
            " && waku-shadow identify-nwaku --binary {output.wakunode2} --tag {params.tag}"
            " --built-from {params.built_from} {params.make_flag_args} --memory-manager {params.memory_manager}"
            " --allocator {params.allocator} --patch-tiers {params.patch_tiers}"
            " --out {output.identity} {input.patches}"
