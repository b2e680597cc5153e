"""The library's stages form a pipeline: no module of a stage imports a module of a later stage.

Top-level modules (layout, errors, checkout) may be imported by any stage; cli/, the command
line over all the stages, may import anything. Imports inside functions count as well.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import waku_shadow

STAGES = ["configuration", "stack", "render", "run", "parse", "validate", "analyse", "paper", "cost", "report"]
SHARED = {"layout", "errors", "checkout"}
ANYTHING_GOES = {"cli", "__main__", "__init__"}
PACKAGE = Path(waku_shadow.__file__).parent


def imported_modules(tree: ast.AST, module: str) -> list[str]:
    """Every module an ``import`` or ``from ... import`` anywhere in the tree names, absolute."""
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")[: -node.level]
                prefix = ".".join(base + ([node.module] if node.module else []))
            else:
                prefix = node.module or ""
            # ``from waku_shadow import layout`` and ``from waku_shadow.render import plan`` name modules
            names += [prefix] + [f"{prefix}.{alias.name}" for alias in node.names]
    return names


def stage_of(module: str) -> str | None:
    """The stage of ``waku_shadow.<stage>...``; None for a module outside the library or top-level."""
    parts = module.split(".")
    if parts[0] != "waku_shadow" or len(parts) < 2:
        return None
    return parts[1] if parts[1] in STAGES else None


def violations(package: Path = PACKAGE) -> list[str]:
    found = []
    for path in sorted(package.rglob("*.py")):
        relative = path.relative_to(package.parent).with_suffix("")
        module = ".".join(relative.parts)
        own = stage_of(module)
        if own is None:
            assert relative.parts[1] in SHARED | ANYTHING_GOES, f"{module} belongs to no stage"
            continue
        tree = ast.parse(path.read_text(), filename=str(path))
        for imported in imported_modules(tree, module):
            theirs = stage_of(imported)
            if theirs is not None and STAGES.index(theirs) > STAGES.index(own):
                found.append(f"{module} ({own}) imports {imported} ({theirs})")
    return sorted(set(found))


def test_every_stage_package_is_in_the_order():
    packages = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    assert packages - ANYTHING_GOES == set(STAGES)


def test_no_stage_imports_a_later_stage():
    assert violations() == []


def test_shared_modules_import_no_stage():
    for name in SHARED:
        module = f"waku_shadow.{name}"
        tree = ast.parse((PACKAGE / f"{name}.py").read_text())
        assert [m for m in imported_modules(tree, module) if stage_of(m)] == [], module


def test_a_later_import_inside_a_function_is_found(tmp_path):
    package = tmp_path / "waku_shadow"
    (package / "render").mkdir(parents=True)
    (package / "render" / "__init__.py").write_text("")
    (package / "render" / "late.py").write_text(
        "from waku_shadow.render import plan\n"
        "def f():\n"
        "    from waku_shadow.analyse import study_tables\n"
        "    from ..report import tables\n"
    )
    assert violations(package) == [
        "waku_shadow.render.late (render) imports waku_shadow.analyse (analyse)",
        "waku_shadow.render.late (render) imports waku_shadow.analyse.study_tables (analyse)",
        "waku_shadow.render.late (render) imports waku_shadow.report (report)",
        "waku_shadow.render.late (render) imports waku_shadow.report.tables (report)",
    ]


def test_the_simulate_stage_starts_without_the_analysis_libraries():
    """`waku-shadow simulate` waits on nothing but Shadow: importing pandas, scipy and matplotlib
    took 1.5 s of each of a study's jobs."""
    loaded = subprocess.run(
        [sys.executable, "-c",
         "import sys; import waku_shadow.cli, waku_shadow.run.guard, waku_shadow.run.collect; "
         "print(' '.join(sorted(sys.modules)))"],
        capture_output=True, text=True, check=True,
    ).stdout.split()
    assert [name for name in ("pandas", "numpy", "scipy", "matplotlib") if name in loaded] == []
