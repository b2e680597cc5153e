"""The commands that write the docs: the configuration reference and the generated tables and figures."""

from __future__ import annotations

from pathlib import Path

from waku_shadow.errors import ConfigError


def cmd_config_reference(args) -> None:
    """The configuration reference (docs/configuration.md), from the study schema."""
    from waku_shadow.report import config_reference

    print(config_reference.markdown(), end="")


def cmd_docs_tables(args) -> None:
    """Fill the generated tables of the README and docs/ from summaries/, results/ and bench/, and draw
    the docs' figures from summaries/."""
    from waku_shadow.report import docs_tables, summaries, summary_figures

    generated = docs_tables.tables(Path(args.results), Path(args.bench), Path(args.summaries), Path(args.configs))
    if args.only:
        unknown = sorted(set(args.only) - set(generated))
        if unknown:
            raise ConfigError(f"--only: no table is called {', '.join(map(repr, unknown))}; known: {', '.join(generated)}")
        # the others are kept as they are, e.g. tables of studies whose results are on another machine
        generated = {name: table if name in args.only else None for name, table in generated.items()}
    for doc in map(Path, args.docs or docs_tables.generated_docs(Path("."))):
        text, kept = docs_tables.fill(doc.read_text(), generated, str(doc))
        doc.write_text(text)
        print(f"{doc}: " + (f"kept as they were, no results here: {', '.join(kept)}" if kept else "every table written"))
    if left_out := docs_tables.unsummarised(Path(args.results), Path(args.configs)):
        print(f"not summarised, no config under {args.configs}: {', '.join(left_out)}")
    if not args.only:
        for path in summary_figures.write(summaries.read_all(Path(args.summaries)), Path(args.figures)):
            print(f"{path}: drawn from its summary")
