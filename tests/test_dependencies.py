"""Every third-party module the code, the tests or the benchmarks import is declared in pyproject.toml.

CI also runs the suite in a freshly created environment (.ci/run), which catches a dependency needed only
indirectly (rtree, which trimesh imports for signed distances); this test catches a module that is importable
here only because another package happened to pull it in.
"""
import ast
import re
import sys
import tomllib
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ["engine", "app", "tests", "bench", "main.py"]
# modules installed where importlib.metadata cannot see their distribution (cmeel's prefix)
PROVIDED_BY = {"pinocchio": "pin"}


def _files():
    for name in SOURCES:
        path = ROOT / name
        yield from ([path] if path.is_file() else sorted(path.rglob("*.py")))


def _imported_top_levels():
    """{top-level module: first file importing it} over every absolute import of the project."""
    found = {}
    for path in _files():
        for node in ast.walk(ast.parse(path.read_bytes())):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                found.setdefault(name.split(".")[0], path.relative_to(ROOT))
    return found


def _first_party():
    """Packages and modules of the repository itself (engine, app, test and bench helpers)."""
    names = {p.stem for p in ROOT.rglob("*.py") if ".venv" not in p.parts}
    return names | {p.name for p in ROOT.iterdir() if p.is_dir()}


def _normal(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def _declared():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    requirements = project["dependencies"] + [r for extra in project["optional-dependencies"].values()
                                              for r in extra]
    return {_normal(re.match(r"[A-Za-z0-9_.-]+", r).group(0)) for r in requirements}


def test_every_imported_package_is_declared():
    providers = metadata.packages_distributions()
    declared, local = _declared(), _first_party()
    undeclared = []
    for module, where in sorted(_imported_top_levels().items()):
        if module in sys.stdlib_module_names or module in local or module == "__future__":
            continue
        dists = {_normal(d) for d in providers.get(module, [])} | {PROVIDED_BY.get(module, module)}
        if not dists & declared:
            undeclared.append(f"{module} (imported by {where}; provided by {sorted(dists) or 'nothing installed'})")
    assert not undeclared, "imported but not declared in pyproject.toml: " + "; ".join(undeclared)
