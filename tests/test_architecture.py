"""The rooms' rules (docs/architecture.md): no import circle anywhere, trees below accounting.

ruff's banned imports (trees/ruff.toml) stop trees from importing accounting as it is written;
this reads the whole import graph, imports inside functions included, as grimp builds it.
"""

from __future__ import annotations

from collections.abc import Iterator

import grimp
import pytest

PACKAGES = ("trees", "accounting", "fairshare_site")
# trees' parts that translate between the outside and both apps.
TREES_OUTER = ("trees.views", "trees.api", "trees.management")


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph(*PACKAGES, cache_dir=None)


def import_circles(graph: grimp.ImportGraph) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    circles = []

    def imports_of(module: str) -> Iterator[str]:
        return iter(sorted(graph.find_modules_directly_imported_by(module)))

    for start in sorted(graph.modules):
        if start in index:
            continue
        work = [(start, imports_of(start))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            module, imported = work[-1]
            for other in imported:
                if other not in index:
                    index[other] = low[other] = len(index)
                    stack.append(other)
                    on_stack.add(other)
                    work.append(
                        (other, iter(sorted(graph.find_modules_directly_imported_by(other))))
                    )
                    break
                if other in on_stack:
                    low[module] = min(low[module], index[other])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[module])
                if low[module] == index[module]:
                    circle = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        circle.append(member)
                        if member == module:
                            break
                    if len(circle) > 1:
                        circles.append(sorted(circle))
    return circles


def test_no_module_imports_itself_back_through_others(graph: grimp.ImportGraph) -> None:
    assert import_circles(graph) == []


def test_a_circle_is_found_where_there_is_one() -> None:
    graph = grimp.ImportGraph()
    for module in ("a", "a.one", "a.two", "a.three", "a.four"):
        graph.add_module(module)
    graph.add_import(importer="a.one", imported="a.two")
    graph.add_import(importer="a.two", imported="a.three")
    graph.add_import(importer="a.three", imported="a.one")
    graph.add_import(importer="a.four", imported="a.one")
    assert import_circles(graph) == [["a.one", "a.three", "a.two"]]


def test_trees_never_imports_accounting_outside_its_views_and_commands(
    graph: grimp.ImportGraph,
) -> None:
    upward = sorted(
        (importer, imported)
        for importer in graph.modules
        if importer.startswith("trees.") and not importer.startswith(TREES_OUTER)
        for imported in graph.find_modules_directly_imported_by(importer)
        if imported == "accounting" or imported.startswith("accounting.")
    )
    assert upward == []
