"""Where each entity stands among all of a cluster's: PBS's pbsfs -c order, Slurm's rank."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple, Protocol, TypeVar

import numpy as np

from trees.engine.pbs import deserving_ranks_of_tree


@dataclass(frozen=True)
class EntityRanking:
    """Where each entity of a cluster stands among all of them; rank 1 is the most deserving."""

    ranks: dict[int, int]  # entity id -> rank; equals share a rank
    total: int
    parents: Mapping[int, int | None]
    names: Mapping[int, str]

    def path_name(self, node: int) -> str:
        """The names from the root's child down to the node: `physics / cond-matter / dkaya`."""
        names = []
        step: int | None = node
        while step is not None and self.parents.get(step) is not None:
            names.append(self.names[step])
            step = self.parents[step]
        return " / ".join(reversed(names))

    def under(self, tops: Iterable[int]) -> list[int]:
        """The ranked entities in the subtrees of `tops`, most deserving first."""
        tops = set(tops)
        found = []
        for entity in self.ranks:
            step: int | None = entity
            while step is not None and step not in tops:
                step = self.parents[step]
            if step is not None:
                found.append(entity)
        return sorted(found, key=lambda entity: (self.ranks[entity], self.path_name(entity)))


class RankedNode(NamedTuple):
    """A node's stored numbers that place its entities."""

    id: int
    parent: int | None
    name: str
    scheduler_made: bool  # PBS's root and `unknown`: never ranked
    fairshare_perc: float
    usage: float
    fairshare_rank: int | None  # Slurm's, as slurmctld left it
    fairshare_rank_of: int | None


def pbs_ranking(nodes: Sequence[RankedNode]) -> EntityRanking:
    """Every entity (a leaf of the tree) in the order pbsfs -c puts them; entities whose
    paths compare equal at every level share a rank."""
    parents = {node.id: node.parent for node in nodes}
    groups = {parent for parent in parents.values() if parent is not None}
    entities = [node.id for node in nodes if node.id not in groups and not node.scheduler_made]
    index = {node.id: place for place, node in enumerate(nodes)}
    parent = np.array([-1 if p is None else index[p] for p in parents.values()], dtype=np.int64)
    perc = np.array([node.fairshare_perc for node in nodes], dtype=np.float64)
    usage = np.array([node.usage for node in nodes], dtype=np.float64)
    places = np.array([index[entity] for entity in entities], dtype=np.int64)
    counted = np.zeros(len(nodes), dtype=np.bool_)
    counted[places] = True
    order = deserving_ranks_of_tree(parent, perc, usage, counted)
    ranks = dict(zip(entities, order.ranks[places].tolist(), strict=True))
    return EntityRanking(ranks, len(entities), parents, {node.id: node.name for node in nodes})


def slurm_ranking(nodes: Sequence[RankedNode]) -> EntityRanking:
    """Each user association's place in Fair Tree's ranking: Fair Tree counts down (the most
    deserving of n users gets rank n, FairShare 1.0), places count up from 1."""
    total = max((node.fairshare_rank_of or 0 for node in nodes), default=0)
    places = {node.id: total - node.fairshare_rank + 1 for node in nodes if node.fairshare_rank}
    parents = {node.id: node.parent for node in nodes}
    return EntityRanking(places, total, parents, {node.id: node.name for node in nodes})


class PathLevel(Protocol):
    """A node of a path from the root, with the stored numbers that say how far over it is."""

    @property
    def name(self) -> str: ...
    @property
    def usage(self) -> float: ...
    @property
    def usage_perc(self) -> float: ...
    @property
    def level_fs(self) -> float | None: ...


Level = TypeVar("Level", bound=PathLevel)


def furthest_over_target(path: Sequence[Level], slurm: bool) -> Level | None:
    """The level of a path (below the root) furthest over its target, which pulls the node
    down: PBS, the highest usage/perc of those using more than their target share of the whole
    (usage/perc above the root's usage); Slurm, the lowest Level FS under 1."""
    below_root = path[1:]
    over: list[tuple[float, Level]]
    if slurm:
        over = [(n.level_fs, n) for n in below_root if n.level_fs is not None and n.level_fs < 1]
    else:
        whole = path[0].usage
        over = [(-n.usage_perc, n) for n in below_root if n.usage_perc > whole]
    return min(over, key=lambda pair: pair[0])[1] if over else None
