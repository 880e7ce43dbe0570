"""An in-memory fairshare tree: parent index, children, shares, usage.

Nodes are integers (0 is the root); everything about a node lives in parallel lists so that a
scheduler module can turn them into numpy arrays and compute a whole level at once. Children are
kept in insertion order; a scheduler that lists them otherwise (PBS: newest first) says so.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

ROOT = 0


@dataclass
class Tree:
    names: list[str] = field(default_factory=list)
    parent: list[int] = field(default_factory=list)
    children: list[list[int]] = field(default_factory=list)
    shares: list[int] = field(default_factory=list)
    depth: list[int] = field(default_factory=list)
    usage: list[float] = field(default_factory=list)

    @classmethod
    def with_root(cls, name: str, *, shares: int, usage: float) -> Tree:
        tree = cls()
        tree._append(name, -1, shares, usage, depth=0)
        return tree

    def __len__(self) -> int:
        return len(self.names)

    def _append(self, name: str, parent: int, shares: int, usage: float, *, depth: int) -> int:
        node = len(self.names)
        self.names.append(name)
        self.parent.append(parent)
        self.children.append([])
        self.shares.append(shares)
        self.depth.append(depth)
        self.usage.append(usage)
        return node

    def add_child(self, parent: int, name: str, *, shares: int, usage: float) -> int:
        node = self._append(name, parent, shares, usage, depth=self.depth[parent] + 1)
        self.children[parent].append(node)
        return node

    def is_leaf(self, node: int) -> bool:
        return not self.children[node]

    def path(self, node: int) -> list[int]:
        """The nodes from the root down to `node`, both included."""
        path = [node]
        while self.parent[path[-1]] >= 0:
            path.append(self.parent[path[-1]])
        path.reverse()
        return path

    def preorder(self, start: int = ROOT, *, newest_first: bool = False) -> Iterator[int]:
        """Each node before its children; children oldest first, or newest first."""
        stack = [start]
        while stack:
            node = stack.pop()
            yield node
            kids = self.children[node]
            stack.extend(kids if newest_first else reversed(kids))

    def levels(self) -> list[npt.NDArray[np.int64]]:
        """Node indices grouped by depth, root level first."""
        depth = np.asarray(self.depth, dtype=np.int64)
        order = np.argsort(depth, kind="stable")
        bounds = np.searchsorted(depth[order], np.arange(int(depth.max()) + 2))
        return [order[bounds[d] : bounds[d + 1]] for d in range(len(bounds) - 1)]


def subtree_ends(depths: Sequence[int]) -> list[int]:
    """For nodes in tree order (each before its descendants), given their depths: the place of
    each one's last descendant, its own where it has none; its subtree is the places between."""
    ends = list(range(len(depths)))
    open_places: list[int] = []  # the places whose subtree the walk is still inside
    for place, depth in enumerate(depths):
        while open_places and depths[open_places[-1]] >= depth:
            ends[open_places.pop()] = place - 1
        open_places.append(place)
    for place in open_places:
        ends[place] = len(depths) - 1
    return ends
