"""PBS Professional fairshare, computed as OpenPBS does it (fairshare.cpp and pbsfs.cpp).

PBS keeps percentages, `fairshare_tree_usage` and the decay factor in float32 and rounds after
every operation, while usage is a double (pbsfs-behaviour.md §0). numpy float32 arrays give the
same roundings, one operation at a time, so each level of the tree is computed at once.
Children are kept newest first, as PBS prepends them (§1.2): `chain()` gives that order.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from trees.engine.tree import ROOT, Tree

TREEROOT = "TREEROOT"
UNKNOWN = "unknown"
ROOT_ALIAS = "root"  # the parent name resource_group uses for TREEROOT
FAIRSHARE_MIN_USAGE = 1.0
UNSPECIFIED = -1
USAGE_NAME_MAX = 50
UNKNOWN_CGROUP = 1
UNKNOWN_ENTITY_SHARES = 1
INT_MIN, INT_MAX = -(2**31), 2**31 - 1  # what a C int (shares, cgroup) holds

_F32 = np.float32
_PBS_NAME = re.compile(r"[A-Za-z0-9.\-_ :]*")  # ASCII only: its length is its bytes

Float32Array = npt.NDArray[np.float32]
Float64Array = npt.NDArray[np.float64]


def f32(value: float) -> float:
    """`value` rounded to IEEE single precision, as a C float holds it."""
    return float(_F32(value))


def resource_group_parent(name: str) -> str:
    """A parent's name as resource_group writes it (and PBS reads it): `root` for TREEROOT."""
    return ROOT_ALIAS if name == TREEROOT else name


def percent(fairshare_perc: float) -> float:
    """tree_percentage * 100 as pbsfs prints it: a float32 multiply."""
    return float(_F32(fairshare_perc) * _F32(100))


@functools.lru_cache(maxsize=1 << 18)  # a cycle checks every record's name again
def is_valid_pbs_name(name: str) -> bool:
    """is_valid_pbs_name(name, 50): ASCII letters, digits and `.-_ :`, under 50 bytes."""
    return len(name) < USAGE_NAME_MAX and _PBS_NAME.fullmatch(name) is not None


def is_readable_record(name: str, usage: float) -> bool:
    """Whether read_usage_v2 takes a usage record: a usage >= 0 (not NaN) and a valid name."""
    return usage >= 0 and is_valid_pbs_name(name)


@dataclass(frozen=True)
class GroupDef:
    """One resource_group entry, `name cgroup parent shares`; parent `root` is TREEROOT."""

    name: str
    cgroup: int
    parent: str
    shares: int


def definition_order(groups: Iterable[GroupDef]) -> list[GroupDef]:
    """The entries in their order, except that one whose parent comes later is held back until
    its parent (PBS reads a parent before its children, and lists siblings newest first, so
    order is meaning). Entries whose parent never comes are a ValueError naming them."""
    ordered: list[GroupDef] = []
    placed = {ROOT_ALIAS, TREEROOT, UNKNOWN}
    waiting: dict[str, list[GroupDef]] = {}
    for group in groups:
        if group.parent not in placed:
            waiting.setdefault(group.parent, []).append(group)
            continue
        ready = [group]
        while ready:
            current = ready.pop()
            ordered.append(current)
            placed.add(current.name)
            ready.extend(reversed(waiting.pop(current.name, [])))
    if waiting:
        orphans = ", ".join(sorted(g.name for held in waiting.values() for g in held))
        raise ValueError(f"entries whose parent is not in the tree: {orphans}")
    return ordered


@dataclass(frozen=True)
class UsageRecord:
    """One entry of the usage database: an entity and its usage."""

    name: str
    usage: float


class PbsTree:
    """The fairshare tree pbsfs builds: TREEROOT, the `unknown` group, the resource groups."""

    def __init__(self, *, unknown_shares: int = 0, last_decay: int = 0) -> None:
        # preload_tree(): TREEROOT (cgroup 0, shares -1) and `unknown` (cgroup 1) as its child.
        self.tree = Tree.with_root(TREEROOT, shares=UNSPECIFIED, usage=FAIRSHARE_MIN_USAGE)
        self.cresgroup: list[int] = [0]
        self.index: dict[str, int] = {TREEROOT: ROOT}
        self.unknown = self._add(ROOT, UNKNOWN, shares=unknown_shares, cgroup=UNKNOWN_CGROUP)
        self.last_decay = last_decay

    @classmethod
    def build(
        cls,
        groups: Iterable[GroupDef],
        records: Iterable[UsageRecord] = (),
        *,
        unknown_shares: int = 0,
        last_decay: int = 0,
        trim: bool = False,
    ) -> PbsTree:
        """preload_tree, then the resource groups in file order, then the usage records."""
        pbs = cls(unknown_shares=unknown_shares, last_decay=last_decay)
        for group in groups:
            pbs.define(group)
        pbs.read_usage(records, trim=trim)
        return pbs

    def __len__(self) -> int:
        return len(self.tree)

    def _add(self, parent: int, name: str, *, shares: int, cgroup: int) -> int:
        node = self.tree.add_child(parent, name, shares=shares, usage=FAIRSHARE_MIN_USAGE)
        self.cresgroup.append(cgroup)
        self.index[name] = node
        return node

    def define(self, group: GroupDef) -> int:
        """Add a resource_group entry; its parent must already be in the tree."""
        if group.name in self.index:
            raise ValueError(f"entity {group.name} is not unique")
        parent = ROOT if group.parent == ROOT_ALIAS else self.index.get(group.parent)
        if parent is None:
            raise ValueError(f"Parent ginfo of {group.name} doesnt exist.")
        return self._add(parent, group.name, shares=group.shares, cgroup=group.cgroup)

    def find(self, name: str) -> int | None:
        return self.index.get(name)

    def name(self, node: int) -> str:
        return self.tree.names[node]

    def shares(self, node: int) -> int:
        return self.tree.shares[node]

    def usage(self, node: int) -> float:
        return self.tree.usage[node]

    def resgroup(self, node: int) -> int:
        parent = self.tree.parent[node]
        return UNSPECIFIED if parent < 0 else self.cresgroup[parent]

    def chain(self, node: int) -> list[int]:
        """The children of `node` in PBS order: newest definition first."""
        return self.tree.children[node][::-1]

    def is_leaf(self, node: int) -> bool:
        return self.tree.is_leaf(node)

    def gpath(self, node: int) -> list[int]:
        """create_group_path(): TREEROOT down to the node; empty for TREEROOT itself."""
        return [] if node == ROOT else self.tree.path(node)

    def unknown_entities(self) -> list[int]:
        """Entities the usage named that resource_group does not define, in PBS order."""
        return [n for n in self.chain(self.unknown) if self.cresgroup[n] == UNSPECIFIED]

    def read_usage(self, records: Iterable[UsageRecord], *, trim: bool = False) -> None:
        """read_usage_v2(): overwrite each named node; a leaf adds its usage to its ancestors.

        Invalid records (negative, NaN, bad name) are skipped as PBS skips them. Names not in
        the tree become entities of `unknown` with 1 share, unless `trim` (pbsfs -e). A record
        of exactly 1 is an entity PBS holds without usage, as find_alloc_ginfo() makes one for
        a job (fairshare.cpp): it is added, and adds nothing above it; PBS never writes such a
        record (rec_write_usage() leaves out usages of 1).
        """
        usage = self.tree.usage
        for record in records:
            if not is_readable_record(record.name, record.usage):
                continue
            node = self.index.get(record.name)
            if node is None:
                if trim:
                    continue
                node = self._add(
                    self.unknown, record.name, shares=UNKNOWN_ENTITY_SHARES, cgroup=UNSPECIFIED
                )
            usage[node] = record.usage
            if record.usage != FAIRSHARE_MIN_USAGE and self.tree.is_leaf(node):
                ancestor = self.tree.parent[node]
                while ancestor >= 0:
                    usage[ancestor] += record.usage
                    ancestor = self.tree.parent[ancestor]

    def set_usage(self, node: int, value: float) -> None:
        """pbsfs -s: the node's own usage only; nothing propagates until the next read."""
        self.tree.usage[node] = value

    def decay(self, factor: float) -> None:
        """decay_fairshare_tree(): usage × (float)factor on every node; below 1 becomes 1."""
        factor = f32(factor)
        usage = self.tree.usage
        for node, value in enumerate(usage):
            value *= factor
            usage[node] = FAIRSHARE_MIN_USAGE if value < FAIRSHARE_MIN_USAGE else value

    def records(self) -> list[UsageRecord]:
        """rec_write_usage(): the leaves whose usage is not 1, in the order PBS writes them.

        PBS writes a node, then its whole sibling chain, then the child chain, recursively: so
        for a chain c1..ck, first the writable c1..ck, then the subtrees of ck, ..., c1.
        """
        usage, names, children = self.tree.usage, self.tree.names, self.tree.children
        out: list[UsageRecord] = []
        stack = [[ROOT]]
        while stack:  # children read directly: a cycle's decay walks 100,000 nodes
            chain = stack.pop()
            for node in chain:
                if usage[node] != 1 and not children[node] and names[node] != UNKNOWN:
                    out.append(UsageRecord(names[node], usage[node]))
            stack.extend(kids[::-1] for node in chain if (kids := children[node]))
        return out

    def preorder(self) -> Iterator[int]:
        """print_fairshare() order: a node, its subtree, then its next sibling."""
        return self.tree.preorder(newest_first=True)


@dataclass(frozen=True)
class PbsMetrics:
    """Every number pbsfs derives from the tree, one array entry per node."""

    group_percentage: Float32Array
    fairshare_perc: Float32Array  # tree_percentage
    fairshare_tree_usage: Float32Array  # usage_factor
    usage: Float64Array
    fairshare_factors: Float64Array

    def usage_perc(self, node: int) -> float:
        """usage / fairshare_perc (double / float); -1 when the percentage is 0."""
        perc = float(self.fairshare_perc[node])
        return -1.0 if perc == 0 else float(self.usage[node]) / perc

    def fairshare_factor(self, node: int) -> float:
        return float(self.fairshare_factors[node])

    def percent(self, node: int) -> float:
        return percent(float(self.fairshare_perc[node]))


def compute(pbs: PbsTree) -> PbsMetrics:
    """calc_fair_share_perc() then calc_usage_factor(), over the whole tree."""
    tree = pbs.tree
    parent = np.asarray(tree.parent, dtype=np.int64)
    shares = np.asarray(tree.shares, dtype=np.int64)
    usage = np.asarray(tree.usage, dtype=np.float64)
    levels = tree.levels()

    # count_shares() sums C ints: wrap as a 32-bit int would.
    sibling_total = np.zeros(len(tree), dtype=np.int64)
    np.add.at(sibling_total, parent[1:], shares[1:])
    sibling_total = (sibling_total + 2**31) % 2**32 - 2**31
    total = sibling_total[parent].astype(_F32)
    total[ROOT] = 1
    with np.errstate(divide="ignore", invalid="ignore"):
        raw_group = shares.astype(_F32) / total

    group = np.zeros(len(tree), dtype=_F32)
    perc = np.zeros(len(tree), dtype=_F32)
    perc[ROOT] = 1
    for level in levels[1:]:
        parent_perc = perc[parent[level]]
        empty = total[level] * parent_perc == 0
        # PBS stores a plain 0 here, never the -0.0 a negative parent would give.
        group[level] = np.where(empty, _F32(0), raw_group[level])
        perc[level] = np.where(empty, _F32(0), group[level] * parent_perc)

    # The usage ratio is a double division stored into a float.
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = (usage / usage[ROOT]).astype(_F32)
    tree_usage = np.zeros(len(tree), dtype=_F32)
    if len(levels) > 1:
        tree_usage[levels[1]] = ratio[levels[1]]
    for level in levels[2:]:
        own = ratio[level]
        tree_usage[level] = own + (tree_usage[parent[level]] - own) * group[level]

    return PbsMetrics(
        group_percentage=group,
        fairshare_perc=perc,
        fairshare_tree_usage=tree_usage,
        usage=usage,
        fairshare_factors=fairshare_factors(perc, tree_usage),
    )


def fairshare_factors(perc: Float32Array, tree_usage: Float32Array) -> Float64Array:
    """2^-(fairshare_tree_usage / fairshare_perc) per node; 0 where the percentage is 0.

    The quotient is a float division (job_info.cpp); a tiny perc overflows it to inf, as in C,
    and the factor is then 0. pow() is the C library's, through math.pow.
    """
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        quotients = (tree_usage / perc).tolist()
    return np.array(
        [0.0 if p == 0 else _pow2(-q) for p, q in zip(perc.tolist(), quotients, strict=True)],
        dtype=np.float64,
    )


def _pow2(exponent: float) -> float:
    try:
        return math.pow(2.0, exponent)
    except OverflowError:  # C's pow returns HUGE_VAL (a negative perc can get here)
        return math.inf


def deserving_key(levels: Iterable[tuple[float, float]]) -> tuple[tuple[int, float], ...]:
    """compare_path() as a sort key (pbsfs -c): smaller is more deserving.

    `levels` are (fairshare_perc, usage) of the nodes from the root's child down to the entity.
    Each level weighs usage/perc, lower first; perc <= 0 sorts after perc > 0 and ends the key,
    as compare_path() stops there. Unlike compare_path(), entities at different depths whose
    levels all tie sort the shallower first instead of tying, and entities under one group of
    perc <= 0 tie: below it negative shares can make percs positive again, and compare_path()
    is then no order that a key could follow.
    """
    key: list[tuple[int, float]] = []
    for perc, usage in levels:
        key.append(_deserving_level(perc, usage))
        if perc <= 0:
            break
    return tuple(key)


_ENDED = (1, 0.0)  # the level of perc <= 0, which ends a key


def _deserving_level(perc: float, usage: float) -> tuple[int, float]:
    return _ENDED if perc <= 0 else (0, usage / perc)


def deserving_ranks_of_tree(
    parent: npt.NDArray[np.int64],
    perc: npt.NDArray[np.floating[Any]],
    usage: npt.NDArray[np.floating[Any]],
    counted: npt.NDArray[np.bool_] | None = None,
) -> DeservingOrder:
    """Each node's rank in compare_path() order (pbsfs -c) by its root path's deserving_key:
    1 plus the `counted` nodes (default: all) whose keys are smaller, so that equal keys share
    a rank. `parent` holds each node's parent's index (-1 for the root); `perc` and `usage`
    each node's fairshare_perc and usage.

    A key is its parent's with the node's own level added, so the keys form a tree of their
    own (a trie): siblings of equal levels are one key, and a group of perc <= 0 ends the key
    of everything below it. The trie is built a depth at a time, each level's new keys sorted
    by their parent key then their level; its pre-order is the keys' order (a key before the
    longer keys it begins). Nothing is built per path, so a chain of 5,000 groups costs as
    much as 5,000 groups side by side, in memory, and a depth's numpy calls, in time.
    """
    size = len(parent)
    key = np.zeros(size, dtype=np.int64)  # each node's key, an index into the trie's arrays
    ended = np.zeros(size, dtype=np.bool_)
    above: list[npt.NDArray[np.int64]] = [np.zeros(1, dtype=np.int64)]  # parent key, by depth
    made = 1  # key 0 is the empty key, of the root
    levels = tree_levels(parent)
    for nodes in levels[1:]:
        up = parent[nodes]
        inherit = ended[up]
        key[nodes[inherit]] = key[up[inherit]]
        ended[nodes[inherit]] = True
        going = nodes[~inherit]
        node_perc = perc[going].astype(np.float64)
        stops = node_perc <= 0
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(stops, 0.0, usage[going].astype(np.float64) / node_perc)
        owner = key[parent[going]]
        order = np.lexsort((ratio, stops, owner))
        owner, flag, ratio = owner[order], stops[order], ratio[order]
        new = np.ones(len(going), dtype=np.bool_)
        new[1:] = (owner[1:] != owner[:-1]) | (flag[1:] != flag[:-1]) | (ratio[1:] != ratio[:-1])
        key[going[order]] = made + np.cumsum(new) - 1
        ended[going] = stops
        above.append(owner[new])
        made += int(new.sum())
    weight = np.bincount(key if counted is None else key[counted], minlength=made)
    # The counted nodes at each key and below it, the deepest keys first.
    below = weight.copy()
    firsts = np.cumsum([0, *map(len, above)])
    for depth in range(len(above) - 1, 0, -1):
        np.add.at(below, above[depth], below[firsts[depth] : firsts[depth + 1]])
    # Before a key in pre-order: what is before its parent key, that key's own nodes, and the
    # keys below each of its earlier siblings (a depth's keys are grouped by parent, in order).
    before = np.zeros(made, dtype=np.int64)
    for depth in range(1, len(above)):
        keys = np.arange(firsts[depth], firsts[depth + 1])
        owner = above[depth]
        sums = np.cumsum(below[keys]) - below[keys]
        group_start = np.ones(len(owner), dtype=np.bool_)
        group_start[1:] = owner[1:] != owner[:-1]
        start_sum = np.maximum.accumulate(np.where(group_start, np.arange(len(owner)), 0))
        before[keys] = before[owner] + weight[owner] + sums - sums[start_sum]
    depth_of = np.zeros(size, dtype=np.int64)
    for depth, nodes in enumerate(levels):
        depth_of[nodes] = depth
    return DeservingOrder(before[key] + 1, ended, depth_of)


@dataclass(frozen=True)
class DeservingOrder:
    """deserving_ranks_of_tree's answer, an entry per node."""

    ranks: npt.NDArray[np.int64]
    ended: npt.NDArray[np.bool_]  # its key ends at a level of perc <= 0 (its own or above)
    depth: npt.NDArray[np.int64]  # the root's is 0


def tree_levels(parent: npt.NDArray[np.int64]) -> list[npt.NDArray[np.int64]]:
    """The nodes by depth from the roots (parent -1) down, a level at a time: no path is
    followed node by node. A ValueError when some nodes are not below a root (a loop)."""
    size = len(parent)
    inner = np.flatnonzero(parent >= 0)
    by_parent = inner[np.argsort(parent[inner], kind="stable")]
    counts = np.bincount(parent[inner], minlength=size) if size else np.zeros(0, np.int64)
    starts = np.cumsum(counts) - counts
    level = np.flatnonzero(parent < 0)
    levels, reached = [], 0
    while len(level):
        levels.append(level)
        reached += len(level)
        many = counts[level]
        total = int(many.sum())
        # The children of every node of the level: each one's run of by_parent, end to end.
        offsets = np.cumsum(many) - many
        places = np.arange(total) - np.repeat(offsets - starts[level], many)
        level = by_parent[places]
    if reached != size:
        raise ValueError("the parents form a loop")
    return levels


def key_rows(keys: Sequence[tuple[tuple[int, float], ...]]) -> Float64Array:
    """deserving_key tuples as rows of numbers that sort as the keys do: a level is two
    numbers, its flag and usage/perc; a key that ends early is padded with -1, which in a
    flag's place sorts before any level, as a shorter key sorts before the longer keys it
    begins. For a few entities' keys (a list of jobs); a whole tree is deserving_ranks_of_tree's."""
    width = 2 * max(map(len, keys), default=0)
    return np.array(
        [[number for level in key for number in level] + [-1.0] * (width - 2 * len(key))
         for key in keys],
        dtype=np.float64,
    ).reshape(len(keys), width)  # fmt: skip


def deserving_ranks(rows: Float64Array) -> npt.NDArray[np.int64]:
    """Each row's rank in compare_path() order (pbsfs -c), rows of key_rows: 1 for the
    most deserving; equal rows share the rank of the first of them."""
    size, width = rows.shape
    if size == 0:
        return np.empty(0, dtype=np.int64)
    order = np.lexsort(rows.T[::-1]) if width else np.arange(size)
    ordered = rows[order]
    starts = np.ones(size, dtype=bool)  # where a row differs from the one before it
    starts[1:] = np.any(ordered[1:] != ordered[:-1], axis=1)
    first = np.maximum.accumulate(np.where(starts, np.arange(size), 0))
    ranks = np.empty(size, dtype=np.int64)
    ranks[order] = first + 1
    return ranks


def node_depths(parent: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """Each node's depth (the root's is 0), from its parent's index (-1 for the root)."""
    depth = np.zeros(len(parent), dtype=np.int64)
    for level, nodes in enumerate(tree_levels(parent)):
        depth[nodes] = level
    return depth


def compare(pbs: PbsTree, metrics: PbsMetrics, a: int, b: int) -> int:
    """compare_path(): -1 when `a` is more deserving, 1 when `b` is, 0 for a tie.

    At the first level where the root paths differ, the lower usage/perc wins; perc <= 0 loses to
    perc > 0 and two such nodes tie at once; an exact tie goes on to the next level.
    """
    return compare_at(pbs, metrics, a, b)[0]


def compare_at(pbs: PbsTree, metrics: PbsMetrics, a: int, b: int) -> tuple[int, int | None]:
    """compare_path()'s answer and the level that gave it: the index, in both root paths, of
    the two differing nodes it weighed last (None when the paths never differ)."""
    path_a, path_b = pbs.gpath(a), pbs.gpath(b)
    perc, usage = metrics.fairshare_perc, metrics.usage
    level = None
    for index, (node_a, node_b) in enumerate(zip(path_a, path_b, strict=False)):
        if node_a == node_b:
            continue
        level = index
        perc_a, perc_b = float(perc[node_a]), float(perc[node_b])
        if perc_a <= 0 and perc_b > 0:
            return 1, level
        if perc_a > 0 and perc_b <= 0:
            return -1, level
        if perc_a <= 0 and perc_b <= 0:
            return 0, level
        value_a, value_b = float(usage[node_a]) / perc_a, float(usage[node_b]) / perc_b
        if value_a < value_b:
            return -1, level
        if value_b < value_a:
            return 1, level
    return 0, level
