"""Slurm fairshare as Slurm 22.05 computes it: Fair Tree (Level FS, rank) and the classic factor.

Follows slurm-fairtree-behaviour.md. NormShares is a double; usage, EffectvUsage and Level FS are
x86-64 80-bit long doubles (numpy.longdouble), because Fair Tree ties are exact comparisons of
those values and binary64 or exact rationals break or merge some of them (§2.1). Children are
kept in sshare's order (users first, then accounts, each by strcmp of the name), the order
slurmctld lists them in after an association change (§0).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

import numpy as np
import numpy.typing as npt

from trees.engine.tree import ROOT, Tree

USE_PARENT = 0x7FFFFFFF  # SLURMDB_FS_USE_PARENT: FairShare=parent
NO_VAL = 0xFFFFFFFE
NO_VAL64 = 0xFFFFFFFFFFFFFFFE
INFINITE = 0xFFFFFFFF
INFINITE64 = 0xFFFFFFFFFFFFFFFF
UINT32 = 2**32
ROOT_ACCOUNT = "root"
DECAY_LN2 = 0.693  # Slurm's first-order ln(2) in 1 - 0.693/half_life
DBL_MIN = sys.float_info.min

LongArray = npt.NDArray[np.longdouble]
FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

_LD = np.longdouble


class Algorithm(StrEnum):
    FAIR_TREE = "fair_tree"
    CLASSIC = "classic"  # PriorityFlags=NO_FAIR_TREE
    DEPTH_OBLIVIOUS = "depth_oblivious"  # PriorityFlags=DEPTH_OBLIVIOUS: classic, depth-oblivious

    def label(self) -> str:
        return {
            Algorithm.FAIR_TREE: "Fair Tree",
            Algorithm.CLASSIC: "classic",
            Algorithm.DEPTH_OBLIVIOUS: "depth-oblivious classic",
        }[self]

    @property
    def classic(self) -> bool:
        """The classic factor, 2^(-EffectvUsage/NormShares), whichever effective usage."""
        return self != Algorithm.FAIR_TREE

    @classmethod
    def of_flags(cls, flags: Iterable[str]) -> Algorithm:
        """PriorityFlags' choice: DEPTH_OBLIVIOUS, else NO_FAIR_TREE, else Fair Tree
        (read_config.c: DEPTH_OBLIVIOUS also clears Fair Tree)."""
        given = set(flags)
        if "DEPTH_OBLIVIOUS" in given:
            return cls.DEPTH_OBLIVIOUS
        return cls.CLASSIC if "NO_FAIR_TREE" in given else cls.FAIR_TREE


@dataclass(frozen=True)
class AssociationDef:
    """One association as sacctmgr holds it: an account, or a user in an account.

    `parent` is an account's parent account (None only for `root`); a user's parent is its account.
    `shares` is RawShares (USE_PARENT for FairShare=parent); `usage` is the raw usage, decayed
    billable TRES-seconds, each association keeping its own as slurmctld does; `priority` is
    the association's Priority as set with sacctmgr (None: unset, its parent's holds).
    """

    account: str
    parent: str | None = ROOT_ACCOUNT
    user: str | None = None
    shares: int = 1
    usage: float = 0.0
    priority: int | None = None

    @property
    def is_user(self) -> bool:
        return self.user is not None

    @property
    def name(self) -> str:
        return self.user if self.user is not None else self.account

    @property
    def key(self) -> tuple[str, str | None]:
        """What makes an association unique in a cluster (partitions are not modelled)."""
        return (self.account, self.user)


def display_key(is_user: bool, name: str) -> tuple[bool, bytes]:
    """_sort_children_list: users before accounts, then strcmp of the name."""
    return (not is_user, name.encode())


class SlurmTree:
    """The association tree: `root`, accounts, and user associations as leaves."""

    def __init__(
        self, root_shares: int = 1, root_usage: float = 0.0, root_priority: int | None = None
    ) -> None:
        self.tree = Tree.with_root(ROOT_ACCOUNT, shares=root_shares, usage=root_usage)
        self.is_user: list[bool] = [False]
        self.priorities: list[int | None] = [root_priority]  # Priority as set, per node
        self.accounts: dict[str, int] = {ROOT_ACCOUNT: ROOT}
        self.users: dict[tuple[str, str], int] = {}

    @classmethod
    def build(cls, associations: Iterable[AssociationDef]) -> SlurmTree:
        """The tree of those associations, each parent listed before its children.

        A `root` account row sets the root's shares and usage; without one the root keeps 1 share
        and the sum of its children's usage, as slurmctld's root would hold.
        """
        given = list(associations)
        roots = [a for a in given if a.user is None and a.account == ROOT_ACCOUNT]
        if len(roots) > 1:
            raise ValueError("account root is defined twice")
        tree = cls(
            root_shares=roots[0].shares if roots else 1,
            root_priority=roots[0].priority if roots else None,
        )
        pending: dict[str, list[AssociationDef]] = {}
        for association in given:
            if association.user is None and association.account == ROOT_ACCOUNT:
                continue
            above = association.account if association.is_user else association.parent
            pending.setdefault(above or ROOT_ACCOUNT, []).append(association)
        stack = [ROOT]
        while stack:
            parent = stack.pop()
            kids = pending.pop(tree.name(parent), [])
            for association in sorted(kids, key=lambda a: display_key(a.is_user, a.name)):
                node = tree.add(parent, association)
                if not association.is_user:
                    stack.append(node)
        if pending:
            missing = ", ".join(sorted(pending))
            raise ValueError(f"parent accounts not defined: {missing}")
        tree.tree.usage[ROOT] = (
            roots[0].usage
            if roots
            else math.fsum(tree.tree.usage[kid] for kid in tree.tree.children[ROOT])
        )
        return tree

    def add(self, parent: int, association: AssociationDef) -> int:
        if self.is_user[parent]:
            raise ValueError(f"{association.name}: a user association cannot have children")
        if association.is_user:
            key = (self.tree.names[parent], association.name)
            if key in self.users:
                raise ValueError(f"user {key[1]} is in account {key[0]} twice")
        elif association.account in self.accounts:
            raise ValueError(f"account {association.account} is defined twice")
        node = self.tree.add_child(
            parent, association.name, shares=association.shares, usage=association.usage
        )
        self.is_user.append(association.is_user)
        self.priorities.append(association.priority)
        if association.is_user:
            self.users[(self.tree.names[parent], association.name)] = node
        else:
            self.accounts[association.account] = node
        return node

    def __len__(self) -> int:
        return len(self.tree)

    def name(self, node: int) -> str:
        return self.tree.names[node]

    def account(self, node: int) -> str:
        """The account of the association: its own name, or a user's account."""
        return self.tree.names[self.tree.parent[node]] if self.is_user[node] else self.name(node)

    def key(self, node: int) -> tuple[str, str | None]:
        return (self.account(node), self.name(node) if self.is_user[node] else None)

    def find(self, account: str, user: str | None = None) -> int | None:
        if user is None:
            return self.accounts.get(account)
        return self.users.get((account, user))

    def user_count(self) -> int:
        """g_user_assoc_count: every user association, the root user's included."""
        return len(self.users)

    def fs_parent(self) -> list[int]:
        """fs_assoc_ptr: the nearest ancestor whose shares are not `parent` (-1 for the root)."""
        parent, shares = self.tree.parent, self.tree.shares
        fs = [-1] * len(self)
        for node in self.tree.preorder():
            up = parent[node]
            if up >= 0:
                fs[node] = fs[up] if up != ROOT and shares[up] == USE_PARENT else up
        return fs

    def records(self) -> list[AssociationDef]:
        """Every association, in sshare's row order, as it would be defined again."""
        out = []
        for node in self.tree.preorder():
            up = self.tree.parent[node]
            out.append(
                AssociationDef(
                    account=self.account(node),
                    parent=None if up < 0 else self.name(up),
                    user=self.name(node) if self.is_user[node] else None,
                    shares=self.tree.shares[node],
                    usage=self.tree.usage[node],
                    priority=self.priorities[node],
                )
            )
        return out

    def effective_priorities(self) -> list[int]:
        """Each association's Priority as slurmctld holds it: its own, else its parent's, down
        from the root (slurmdbd gives an association its parent's unset limits, INFINITE
        among them); unset up to the root, it is 0 (assoc_mgr.c _set_assoc_norm_priority)."""
        held = [0] * len(self)
        for node in self.tree.preorder():
            own, up = self.priorities[node], self.tree.parent[node]
            if own is None or own == INFINITE:
                held[node] = held[up] if up >= 0 else 0
            else:
                held[node] = own
        return held


@dataclass(frozen=True)
class SlurmMetrics:
    """What slurmctld holds for every association after a calc pass (index = tree node)."""

    algorithm: Algorithm
    fs_parent: list[int]
    level_shares: IntArray  # Σ shares of the fs siblings; NO_VAL for the root
    norm_shares: FloatArray  # NormShares (double)
    norm_usage: LongArray  # NormUsage; NO_VAL for the root, which Slurm never computes
    effectv_usage: LongArray  # EffectvUsage (Fair Tree: share of the fs parent's usage)
    level_fs: LongArray  # Level FS (Fair Tree); NO_VAL where Slurm leaves it so
    fairshare: FloatArray  # FairShare: Fair Tree users rank/count, classic every association
    rank: IntArray  # Fair Tree rank of each user (0 for accounts and in classic mode)
    tied: npt.NDArray[np.bool_]  # Fair Tree: ranked as tied with the previous sibling
    user_count: int
    dampening: int


def level_shares(tree: SlurmTree, fs_parent: Sequence[int]) -> IntArray:
    """_get_children_level_shares: `parent`-share siblings add 0; uint32 arithmetic."""
    shares = np.asarray(tree.tree.shares, dtype=np.int64)
    own = np.where(shares == USE_PARENT, 0, shares)
    fs = np.asarray(fs_parent, dtype=np.int64)
    total = np.zeros(len(tree), dtype=np.int64)
    np.add.at(total, fs[1:], own[1:])
    out = total[np.maximum(fs, 0)] % UINT32
    out[ROOT] = NO_VAL
    return out


def norm_shares_fair_tree(tree: SlurmTree, fs_parent: Sequence[int], level: IntArray) -> FloatArray:
    """_normalize_assoc_shares_fair_tree: S = shares/level_shares of self, or of the fs parent."""
    shares = np.asarray(tree.tree.shares, dtype=np.float64)
    who = np.arange(len(tree))
    use_parent = shares == USE_PARENT
    who[use_parent] = np.asarray(fs_parent)[use_parent]
    below = level[who].astype(np.float64)
    out = np.zeros(len(tree), dtype=np.float64)
    np.divide(shares[who], below, out=out, where=below != 0)
    return out


def norm_shares_classic(tree: SlurmTree, fs_parent: Sequence[int], level: IntArray) -> FloatArray:
    """_normalize_assoc_shares_traditional: 1.0 × own ratio × each ancestor's below the root."""
    shares = np.asarray(tree.tree.shares, dtype=np.float64)
    ratio = np.zeros(len(tree), dtype=np.float64)
    np.divide(shares, level.astype(np.float64), out=ratio, where=level != 0)
    ratio[shares == USE_PARENT] = 1.0  # skipped on the way up: × 1.0 is exact
    parent = np.asarray(tree.tree.parent, dtype=np.int64)
    out = np.ones(len(tree), dtype=np.float64)
    walker = np.arange(len(tree))
    climbing = parent[walker] >= 0
    while climbing.any():
        out[climbing] *= ratio[walker[climbing]]
        walker[climbing] = parent[walker[climbing]]
        climbing = parent[walker] >= 0
    for node in tree.tree.preorder():  # a `parent` association copies its fs parent's
        if node != ROOT and tree.tree.shares[node] == USE_PARENT:
            out[node] = out[fs_parent[node]]
    return out


def norm_usage(usage: LongArray) -> LongArray:
    """set_assoc_usage_norm: usage / root usage, 0 without root usage, at most 1."""
    out = np.zeros(len(usage), dtype=_LD)
    if usage[ROOT] != 0:
        out = np.minimum(usage / usage[ROOT], _LD(1))
    out[ROOT] = NO_VAL
    return out


def effectv_usage_fair_tree(usage: LongArray, fs_parent: Sequence[int]) -> LongArray:
    """_ft_set_assoc_usage_efctv: usage / the fs parent's usage, 0 if that is 0; root 1.0."""
    fs = np.asarray(fs_parent, dtype=np.int64)
    above = usage[np.maximum(fs, 0)]
    out = np.zeros(len(usage), dtype=_LD)
    np.divide(usage, above, out=out, where=above != 0)
    out[ROOT] = 1
    return out


def level_fs(tree: SlurmTree, norm: FloatArray, effectv: LongArray) -> LongArray:
    """_calc_assoc_fs: LF = S/U (inf when U is 0), 0 when S is 0, `parent` users inf."""
    with np.errstate(divide="ignore", invalid="ignore"):  # S/0 is inf; 0/0 is set to 0 below
        out = norm.astype(_LD) / effectv
    out[norm == 0] = 0
    shares = np.asarray(tree.tree.shares, dtype=np.int64)
    users = np.asarray(tree.is_user, dtype=bool)
    parent_shares = shares == USE_PARENT
    out[parent_shares & users] = np.inf
    out[parent_shares & ~users] = NO_VAL
    out[ROOT] = NO_VAL
    return out


def effectv_usage_classic(
    tree: SlurmTree, fs_parent: Sequence[int], level: IntArray, usage_norm: LongArray
) -> LongArray:
    """_set_assoc_usage_efctv: ua + (ue_parent - ua) × shares/level_shares, top down; root 1.0."""
    out = np.zeros(len(tree), dtype=_LD)
    out[ROOT] = 1
    shares = tree.tree.shares
    for node in tree.tree.preorder():
        if node == ROOT:
            continue
        above = fs_parent[node]
        if above == ROOT:
            out[node] = usage_norm[node]
        elif shares[node] == USE_PARENT or level[node] == 0:
            out[node] = out[above]
        else:
            ua = usage_norm[node]
            out[node] = ua + (out[above] - ua) * (_LD(shares[node]) / _LD(int(level[node])))
    return out


DEPTH_OBLIVIOUS_F = _LD(5.0)  # _depth_oblivious_set_usage_efctv's f ("could be a tunable")


def effectv_usage_depth_oblivious(
    tree: SlurmTree, fs_parent: Sequence[int], norm: FloatArray, usage_norm: LongArray
) -> LongArray:
    """_depth_oblivious_set_usage_efctv (priority_multifactor.c at slurm-22-05-8-1), top down:
    R = ratio_p · ratio_l^k, EffectvUsage = R · NormShares, with ratio_p the fs parent's
    EffectvUsage over its NormShares, ratio_l this association's NormUsage over NormShares
    divided by its siblings' (their NormUsage summed, `parent` ones left out, over the fs
    parent's NormShares), and k = 1 unless the two logs differ in sign, then
    1 / (1 + (5 · ln ratio_p)²). Long double as in C, but pow(ratio_l, k) is C's double pow.
    Without shares, parent usage or own usage: the NormUsage; `parent` shares: the fs
    parent's; below the root: the NormUsage."""
    n = len(tree)
    out = np.zeros(n, dtype=_LD)
    out[ROOT] = 1
    shares = tree.tree.shares
    siblings: dict[int, _LD] = {}
    for node in range(1, n):
        if shares[node] != USE_PARENT:
            above = fs_parent[node]
            siblings[above] = siblings.get(above, _LD(0)) + usage_norm[node]
    for node in tree.tree.preorder():
        if node == ROOT:
            continue
        above = fs_parent[node]
        own_norm = _LD(norm[node])
        if above == ROOT:
            out[node] = usage_norm[node]
        elif shares[node] == USE_PARENT:
            out[node] = out[above]
        elif own_norm and norm[above] and out[above] and usage_norm[node]:
            parent_norm = _LD(norm[above])
            ratio_p = out[above] / parent_norm
            ratio_s = siblings.get(above, _LD(0)) / parent_norm
            ratio_l = (usage_norm[node] / own_norm) / ratio_s
            if not ratio_p or not ratio_l or np.log(ratio_p) * np.log(ratio_l) >= 0:
                k = _LD(1)
            else:
                k = _LD(1) / (_LD(1) + (DEPTH_OBLIVIOUS_F * np.log(ratio_p)) ** 2)
            power = _LD(math.pow(float(ratio_l), float(k)))
            out[node] = ratio_p * power * own_norm
        else:
            out[node] = usage_norm[node]
    return out


def fs_factor_classic(usage_efctv: float, shares_norm: float, dampening: int = 1) -> float:
    """priority_p_calc_fs_factor: 2^-((EffectvUsage/NormShares)/FairShareDampeningFactor)."""
    if math.isclose(usage_efctv, NO_VAL, rel_tol=0, abs_tol=1e-5) or shares_norm <= 0:
        return 0.0
    quotient = (_LD(usage_efctv) / _LD(shares_norm)) / _LD(dampening)
    try:
        return math.pow(2.0, -float(quotient))
    except OverflowError:
        return math.inf


def rank_fair_tree(
    tree: SlurmTree, fs_parent: Sequence[int], lfs: LongArray
) -> tuple[FloatArray, IntArray, npt.NDArray[np.bool_]]:
    """_apply_priority_fs/_calc_tree_fs: depth-first over siblings sorted by Level FS.

    Siblings sort by Level FS descending, users first on equal values, stably in children-list
    order. A user takes a new rank unless tied with the previous sibling; tied accounts are not
    merged (the merge count is always 0) but pass the tie on to their first child (§2.3, §2.4).
    """
    n = len(tree)
    users = np.asarray(tree.is_user, dtype=bool)
    fs = np.asarray(fs_parent, dtype=np.int64)
    # Each fs parent's children list is filled in preorder (§0): that position breaks ties.
    children_list = np.empty(n, dtype=np.int64)
    children_list[list(tree.tree.preorder())] = np.arange(n)
    members = np.flatnonzero(fs >= 0)
    order = members[
        np.lexsort((children_list[members], ~users[members], -lfs[members], fs[members]))
    ]
    groups = fs[order]
    starts = np.flatnonzero(np.r_[True, groups[1:] != groups[:-1]])
    sorted_children: dict[int, npt.NDArray[np.int64]] = {
        int(groups[s]): order[s:e]
        for s, e in zip(starts, np.r_[starts[1:], len(order)], strict=True)
    }
    # tied = the previous sibling's Level FS equals this one's; before the first it is NO_VAL.
    previous = np.empty(len(order), dtype=_LD)
    previous[1:] = lfs[order[:-1]]
    previous[starts] = NO_VAL
    tied = np.zeros(n, dtype=bool)
    tied[order] = previous == lfs[order]

    count = tree.user_count()
    fairshare = np.full(n, np.nan, dtype=np.float64)
    rank = np.zeros(n, dtype=np.int64)
    current = remaining = count
    # (siblings, next index, account_tied); an explicit stack keeps deep trees safe.
    stack: list[tuple[npt.NDArray[np.int64], int, bool]] = [
        (sorted_children.get(ROOT, order[:0]), 0, False)
    ]
    while stack:
        siblings, index, account_tied = stack.pop()
        if index >= len(siblings):
            continue
        node = int(siblings[index])
        is_tied = account_tied if index == 0 and account_tied else bool(tied[node])
        tied[node] = is_tied
        stack.append((siblings, index + 1, account_tied))
        if users[node]:
            if not is_tied:
                current = remaining
            rank[node] = current
            fairshare[node] = current / count
            remaining -= 1
        else:
            stack.append((sorted_children.get(node, order[:0]), 0, is_tied))
    return fairshare, rank, tied


def compute(
    tree: SlurmTree, algorithm: Algorithm = Algorithm.FAIR_TREE, *, dampening: int = 1
) -> SlurmMetrics:
    """Every association's values after one calc pass with the tree's current usage."""
    fs_parent = tree.fs_parent()
    level = level_shares(tree, fs_parent)
    usage = np.asarray(tree.tree.usage, dtype=_LD)
    usage_norm = norm_usage(usage)
    n = len(tree)
    if algorithm == Algorithm.FAIR_TREE:
        norm = norm_shares_fair_tree(tree, fs_parent, level)
        effectv = effectv_usage_fair_tree(usage, fs_parent)
        lfs = level_fs(tree, norm, effectv)
        fairshare, rank, tied = rank_fair_tree(tree, fs_parent, lfs)
    else:
        norm = norm_shares_classic(tree, fs_parent, level)
        if algorithm == Algorithm.DEPTH_OBLIVIOUS:
            effectv = effectv_usage_depth_oblivious(tree, fs_parent, norm, usage_norm)
        else:
            effectv = effectv_usage_classic(tree, fs_parent, level, usage_norm)
        lfs = np.full(n, NO_VAL, dtype=_LD)
        fairshare = np.array(
            [fs_factor_classic(float(effectv[i]), float(norm[i]), dampening) for i in range(n)]
        )
        rank, tied = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=bool)
    return SlurmMetrics(
        algorithm=algorithm,
        fs_parent=fs_parent,
        level_shares=level,
        norm_shares=norm,
        norm_usage=usage_norm,
        effectv_usage=effectv,
        level_fs=lfs,
        fairshare=fairshare,
        rank=rank,
        tied=tied,
        user_count=tree.user_count(),
        dampening=dampening,
    )


def target_share(tree: SlurmTree, metrics: SlurmMetrics) -> FloatArray:
    """Each association's share of the whole machine: the classic NormShares, for any algorithm."""
    if metrics.algorithm.classic:
        return metrics.norm_shares
    return norm_shares_classic(tree, metrics.fs_parent, metrics.level_shares)


def level_share(tree: SlurmTree, metrics: SlurmMetrics) -> FloatArray:
    """Each association's share among its siblings: the Fair Tree NormShares, for any algorithm."""
    if metrics.algorithm == Algorithm.FAIR_TREE:
        return metrics.norm_shares
    return norm_shares_fair_tree(tree, metrics.fs_parent, metrics.level_shares)


@dataclass(frozen=True)
class Comparison:
    """Where Fair Tree decides between two associations: the first common ancestor's children."""

    ancestor: int
    child_a: int  # the sibling on a's side (a itself when a sits directly under the ancestor)
    child_b: int
    winner: int | None  # child_a or child_b, by higher Level FS; None when their Level FS tie


def fs_path(fs_parent: Sequence[int], node: int) -> list[int]:
    """The fs ancestors from the root down to `node`: the lists Fair Tree walks through."""
    path = [node]
    while fs_parent[path[-1]] >= 0:
        path.append(fs_parent[path[-1]])
    path.reverse()
    return path


def compare(metrics: SlurmMetrics, a: int, b: int) -> Comparison:
    """Fair Tree's answer to "who is more deserving": Level FS at the first common ancestor."""
    if a == b:
        raise ValueError("compare needs two different associations")
    path_a, path_b = fs_path(metrics.fs_parent, a), fs_path(metrics.fs_parent, b)
    common = 0
    while common < min(len(path_a), len(path_b)) and path_a[common] == path_b[common]:
        common += 1
    if common == len(path_a) or common == len(path_b):
        raise ValueError("one association is an ancestor of the other")
    child_a, child_b = path_a[common], path_b[common]
    lfs_a, lfs_b = metrics.level_fs[child_a], metrics.level_fs[child_b]
    winner = None if lfs_a == lfs_b else (child_a if lfs_a > lfs_b else child_b)
    return Comparison(ancestor=path_a[common - 1], child_a=child_a, child_b=child_b, winner=winner)


def association_label(tree: SlurmTree, node: int) -> str:
    """`account` or `account:user`, as the commands take them."""
    return f"{tree.account(node)}:{tree.name(node)}" if tree.is_user[node] else tree.name(node)


def association_find(tree: SlurmTree, label: str) -> int:
    """The association `ACCOUNT`, `ACCOUNT:USER`, or `USER` when the user is in one account."""
    account, _, user = label.partition(":")
    if user:
        found = tree.find(account, user)
    else:
        found = tree.find(label)
        if found is None:
            matches = [node for (_, name), node in tree.users.items() if name == label]
            if len(matches) > 1:
                raise LookupError(f"user {label} is in several accounts: say ACCOUNT:{label}")
            found = matches[0] if matches else None
    if found is None:
        raise LookupError(f"no association {label}")
    return found


class UsageResetPeriod(StrEnum):
    """PriorityUsageResetPeriod."""

    NONE = "NONE"
    NOW = "NOW"
    DAILY = "DAILY"
    WEEKLY = "WEEKLY"
    MONTHLY = "MONTHLY"
    QUARTERLY = "QUARTERLY"
    YEARLY = "YEARLY"


def decay_factor(half_life: timedelta) -> float:
    """_decay_thread: 1 - 0.693/PriorityDecayHalfLife in seconds per second; 1 (none) for 0."""
    seconds = half_life.total_seconds()
    return 1.0 if seconds <= 0 else 1.0 - DECAY_LN2 / seconds


def decay_over(factor: float, seconds: float) -> float:
    """real_decay = pow(decay_factor, run_delta), never below DBL_MIN."""
    return max(math.pow(factor, seconds), DBL_MIN)


def new_usage(seconds: float, factor: float, billable: float, usage_factor: float = 1.0) -> float:
    """_apply_new_usage: run_delta × pow(decay_factor, run_delta) × billable TRES × QOS factor."""
    return seconds * math.pow(factor, seconds) * billable * usage_factor


def next_usage_reset(after: datetime, period: UsageResetPeriod) -> datetime | None:
    """_next_reset: the next reset at local midnight (weeks from Sunday, months on day 1)."""
    if period in (UsageResetPeriod.NONE, UsageResetPeriod.NOW):
        return None
    midnight = after.replace(hour=0, minute=0, second=0, microsecond=0)
    if period == UsageResetPeriod.DAILY:
        return midnight + timedelta(days=1)
    if period == UsageResetPeriod.WEEKLY:
        return midnight + timedelta(days=7 - (midnight.weekday() + 1) % 7)
    month_step = {
        UsageResetPeriod.MONTHLY: 1,
        UsageResetPeriod.QUARTERLY: 3,
        UsageResetPeriod.YEARLY: 12,
    }[period]
    month0 = midnight.year * 12 + midnight.month - 1
    if period == UsageResetPeriod.QUARTERLY:
        month0 -= (midnight.month - 1) % 3
    elif period == UsageResetPeriod.YEARLY:
        month0 -= midnight.month - 1
    month0 += month_step
    return midnight.replace(year=month0 // 12, month=month0 % 12 + 1, day=1)


def decay_usage(tree: SlurmTree, factor: float, seconds: float) -> bool:
    """Every association's own usage (the root's too) × pow(decay_factor, run_delta); whether
    it changed anything (slurmctld skips a real_decay of 1)."""
    real = decay_over(factor, seconds)
    if real == 1.0:
        return False
    tree.tree.usage = [usage * real for usage in tree.tree.usage]
    return True


def charge(tree: SlurmTree, node: int, usage: float) -> None:
    """Add a job's new usage to its association and every ancestor up to the root."""
    for above in tree.tree.path(node):
        tree.tree.usage[above] += usage
