"""gpufeed's modules import one another without a circle: every import statement of the package
as it is installed (the one the tests import), those inside functions included, is an edge, and
the graph of those edges has no cycle. A circle works only while each of its deferred imports
stays deferred, and makes the modules on it one piece that cannot be read or moved apart."""

from __future__ import annotations

import ast
import os
from typing import Optional

import gpufeed

PACKAGE = os.path.dirname(gpufeed.__file__)


def package_modules(root: str, name: str = "gpufeed") -> dict:
    """The modules under package directory `root`: dotted name -> source path (None for an
    extension module, which imports nothing of the package)."""
    found = {}
    for directory, subdirectories, files in os.walk(root):
        subdirectories[:] = [d for d in subdirectories
                             if os.path.isfile(os.path.join(directory, d, "__init__.py"))]
        relative = os.path.relpath(directory, root)
        package = name if relative == "." else ".".join([name, *relative.split(os.sep)])
        for file in files:
            stem, extension = os.path.splitext(file)
            if extension == ".py":
                found[package if stem == "__init__" else f"{package}.{stem}"] = \
                    os.path.join(directory, file)
            elif extension in (".so", ".pyd"):
                found[f"{package}.{file.split('.')[0]}"] = None
    return found


def imported(module: str, is_package: bool, node: ast.AST, modules: dict) -> set:
    """The package's modules an import statement of `module` runs: each named module, and each
    package above it that `module` is not itself inside (those already run before it)."""
    if isinstance(node, ast.Import):
        targets = [alias.name for alias in node.names]
    else:
        if node.level:
            parts = module.split(".") if is_package else module.split(".")[:-1]
            parts = parts[:len(parts) - (node.level - 1)]
            base = ".".join(parts + ([node.module] if node.module else []))
        else:
            base = node.module or ""
        # `from X import y`: the module X.y where there is one, else a name of X.
        targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                   for alias in node.names]
    inside = {".".join(module.split(".")[:i]) for i in range(1, module.count(".") + 2)}
    edges = set()
    for target in targets:
        parts = target.split(".")
        for i in range(1, len(parts) + 1):
            name = ".".join(parts[:i])
            if name in modules and (name not in inside or i == len(parts)) and name != module:
                edges.add(name)
    return edges


def import_graph(modules: dict) -> dict:
    """Module -> the package's modules its import statements (anywhere in it) name."""
    graph = {}
    for module, path in modules.items():
        graph[module] = set()
        if path is None:
            continue
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), filename=path)
        is_package = os.path.basename(path) == "__init__.py"
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                graph[module] |= imported(module, is_package, node, modules)
    return graph


def find_cycle(graph: dict) -> Optional[list]:
    """A cycle of `graph` as its modules, the first repeated at the end, or None."""
    state = {}  # module -> "open" while on the path, "done" once all below it were seen
    path: list = []

    def visit(module: str) -> Optional[list]:
        state[module] = "open"
        path.append(module)
        for target in sorted(graph.get(module, ())):
            if state.get(target) == "open":
                return path[path.index(target):] + [target]
            if target not in state:
                cycle = visit(target)
                if cycle:
                    return cycle
        path.pop()
        state[module] = "done"
        return None

    for module in sorted(graph):
        if module not in state:
            cycle = visit(module)
            if cycle:
                return cycle
    return None


def test_gpufeed_imports_its_modules_without_a_circle():
    graph = import_graph(package_modules(PACKAGE))
    cycle = find_cycle(graph)
    assert cycle is None, "gpufeed's modules import each other in a circle: " + " -> ".join(cycle)


def test_the_graph_holds_the_imports_inside_functions_and_packages():
    graph = import_graph(package_modules(PACKAGE))
    assert "gpufeed._profile_state" in graph["gpufeed._loader"]
    assert "gpufeed._loader" in graph["gpufeed._profile.remedy"]  # imported inside a function
    assert "gpufeed._pack" in graph["gpufeed._profile.advice"]  # inside input_pool
    assert "gpufeed._profile" in graph["gpufeed"]
    # A subpackage's module runs its package's __init__ when imported from outside it.
    assert imported("gpufeed._loader", False,
                    ast.parse("from ._profile import session").body[0], graph) == \
        {"gpufeed._profile", "gpufeed._profile.session"}


def test_a_circle_is_found_and_named():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set()}
    assert find_cycle(graph) == ["a", "b", "c", "a"]
    graph["c"].discard("a")
    assert find_cycle(graph) is None
