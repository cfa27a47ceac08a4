"""The package's modules import in one direction: no circle, counting every import the code spells, at the top,
inside a function or under TYPE_CHECKING (issue 51). A circle makes the order modules load in matter, and hides
which layer decides what."""
from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

from .conftest import ROOT

PACKAGES = ("gke_ai_batch", "components", "policies")


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The package's modules that `name` imports (a `from x import y` of a module y counts as y)."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = ".".join([*package[:len(package) - node.level + 1], *([node.module] if node.module else [])]) \
                if node.level else node.module or ""
            submodules = [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in modules]
            targets = submodules or [base]  # `from package import module` reads the module
        else:
            continue
        out |= {t for t in targets if t in modules and t != name}
    return out


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The graph's strongly connected groups of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = stack[stack.index(node):]
                del stack[stack.index(node):]
                if len(group) > 1:
                    found.append(sorted(group))
    return found


def test_no_module_of_the_package_imports_itself_back():
    modules = _modules()
    graph = {name: _imports(name, path, modules) for name, path in modules.items()}
    assert circles(graph) == []


def test_a_circle_is_found_through_any_number_of_modules():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


# what each layer may read of the package (besides itself): the stack config and facts, then the plans
LAYERS = {"gke_ai_batch.model": ("gke_ai_batch.vocabulary",),
          "gke_ai_batch.plan": ("gke_ai_batch.vocabulary", "gke_ai_batch.model")}


def test_the_model_and_the_plans_read_nothing_above_them():
    modules = _modules()
    upward = sorted(f"{name} imports {target}" for name, path in modules.items() for layer, allowed in LAYERS.items()
                    if name.startswith(layer + ".") for target in _imports(name, path, modules)
                    if not target.startswith((layer, *allowed)))
    assert upward == []


ENTRY_POINTS = {"__init__", "__main__", "admit", "diff", "report", "access"}  # python -m gke_ai_batch.offline[.x]


def test_offline_keeps_only_its_entry_points_at_the_top_and_the_rest_in_rooms():
    """Issue 51: offline/ was 38 modules at one level; what a change does, the views, the runtime and where admitted
    work goes are rooms of their own (docs/architecture.md)."""
    offline = ROOT / "gke_ai_batch" / "offline"
    assert {p.stem for p in offline.glob("*.py")} == ENTRY_POINTS
    assert {p.name for p in offline.iterdir() if p.is_dir() and p.name != "__pycache__"} == {
        "changes", "views", "engine", "placement"}


def test_no_module_is_over_600_lines():
    long = {str(p.relative_to(ROOT)): n for package in PACKAGES for p in (ROOT / package).rglob("*.py")
            if (n := len(p.read_text().splitlines())) > 600}
    assert long == {}


def _plan_functions(path: Path) -> set[str]:
    """The functions of gke_ai_batch.plan a module calls into: imported by name, or read off an imported plan module
    (classes, their methods and constants are the plans' data, not calls back into plan/)."""
    tree = ast.parse(path.read_text())
    modules = _modules()
    found = set()
    for node in ast.walk(tree):
        if not (isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("gke_ai_batch.plan")):
            continue
        for alias in node.names:
            submodule = f"{node.module}.{alias.name}"
            target = importlib.import_module(submodule) if submodule in modules \
                else getattr(importlib.import_module(node.module), alias.name)
            if inspect.isfunction(target):
                found.add(f"{node.module}.{alias.name}")
            elif inspect.ismodule(target):
                local = alias.asname or alias.name
                found |= {f"{target.__name__}.{a.attr}" for a in ast.walk(tree) if isinstance(a, ast.Attribute)
                          and isinstance(a.value, ast.Name) and a.value.id == local
                          and inspect.isfunction(getattr(target, a.attr, None))}
    return found


def test_each_component_declares_from_one_plan_of_its_own():
    """Issue 51: a component module takes at most one function from plan/ (its own plan entry) and declares from
    that plan's data; kueue_layer took six, platform five, tpu_slice_pool four."""
    over = {p.name: sorted(f) for p in (ROOT / "components").glob("*.py") if len(f := _plan_functions(p)) > 1}
    assert over == {}


def test_a_component_calling_back_into_plan_is_counted(tmp_path):
    module = tmp_path / "component.py"
    module.write_text("from gke_ai_batch.plan import lifecycle\nfrom gke_ai_batch.plan.installs import kueue_values\n"
                      "from gke_ai_batch.plan.pools import PoolPlan\nlifecycle.release(None, 'kueue')\n"
                      "lifecycle.NAMED.options()\n")
    assert _plan_functions(module) == {"gke_ai_batch.plan.installs.kueue_values", "gke_ai_batch.plan.lifecycle.release"}
