"""Who may read what of a cluster's tree (reads only; the roles of DESIGN §1).

Admins (Django staff) read and edit everything. A member reads the subtrees of the nodes they
are a member of and the leaves of their scheduler user name (on Altair Accelerator, every leaf
`G.name` of a group where their jobs run); a manager also watches the trends and members'
standing of the subtrees they manage. With `private_usage` off any logged-in person reads the
whole tree; with it on (Slurm's PrivateData=usage), the rest of the tree shows only along their
own path: its nodes and their siblings' totals, without pages of their own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.contrib.auth.models import AnonymousUser, User

from trees.models import Cluster, Membership, Node, NodeKind, Person, Role, Scheduler
from trees.selectors.accelerator_standing import user_leaf_ids_get
from trees.selectors.nodes import ancestor_ids_get, descendant_ids_get


@dataclass(frozen=True)
class Access:
    """One person's view of one cluster; node ids throughout."""

    admin: bool
    whole_tree: bool  # every node readable (admin, or private_usage off)
    subtrees: frozenset[int]  # nodes whose whole subtree is readable (memberships)
    managed: frozenset[int]  # nodes whose subtree they manage
    own: frozenset[int]  # leaves of their scheduler user name
    on_path: frozenset[int]  # ancestors of what they read: shown, their children as totals

    def reads(self, path: Sequence[int]) -> bool:
        """Whether the node at the end of `path` (ids from the root) is theirs to read in full."""
        return (
            self.whole_tree or path[-1] in self.own or any(node in self.subtrees for node in path)
        )

    def sees(self, path: Sequence[int]) -> bool:
        """Whether the node shows at all: readable, on their path, or a sibling along it."""
        if self.reads(path) or path[-1] in self.on_path:
            return True
        return len(path) > 1 and path[-2] in self.on_path

    def opens(self, path: Sequence[int]) -> bool:
        """Whether the node has a page for them: readable, or an ancestor of what is."""
        return self.reads(path) or path[-1] in self.on_path

    def manages(self, path: Sequence[int]) -> bool:
        return self.admin or any(node in self.managed for node in path)


def scheduler_user(user: User | AnonymousUser) -> str:
    """The user name the person's jobs run under: their Person's, else their login."""
    if not user.is_authenticated:
        return ""
    person = Person.objects.filter(user=user).values_list("scheduler_user", flat=True).first()
    return person or user.get_username()


def is_admin(user: User | AnonymousUser) -> bool:
    """Admins are Django staff: they read and edit every cluster, import and audit."""
    return user.is_authenticated and bool(getattr(user, "is_staff", False))


def access_get(*, user: User | AnonymousUser, cluster: Cluster) -> Access:
    if not user.is_authenticated:
        return Access(False, False, frozenset(), frozenset(), frozenset(), frozenset())
    admin = is_admin(user)
    roles = list(
        Membership.objects.filter(user=user, node__cluster=cluster).values_list("node_id", "role")
    )
    subtrees = frozenset(node for node, _ in roles)
    managed = frozenset(node for node, role in roles if role == Role.MANAGER)
    own = _own_leaves(cluster, scheduler_user(user))
    whole_tree = admin or not cluster.private_usage
    on_path = frozenset() if whole_tree else ancestor_ids_get(subtrees | own)
    return Access(admin, whole_tree, subtrees, managed, own, on_path)


def _own_leaves(cluster: Cluster, name: str) -> frozenset[int]:
    """The leaves of a scheduler user name: its user entities (PBS, Slurm), or every
    Accelerator leaf `G.name` (a group where their jobs run)."""
    if cluster.scheduler == Scheduler.ACCELERATOR:
        return user_leaf_ids_get(cluster=cluster, user=name)
    rows = Node.objects.filter(cluster=cluster, kind=NodeKind.USER, name=name)
    return frozenset(rows.values_list("id", flat=True))


def visible_ids_get(*, access: Access) -> frozenset[int] | None:
    """Every node the person sees (`Access.sees`), for lookups by name that must not tell a
    hidden node from one that does not exist; None when they see the whole tree."""
    if access.whole_tree:
        return None
    read = access.subtrees | descendant_ids_get(access.subtrees) | access.own
    beside = Node.objects.filter(parent_id__in=access.on_path).values_list("id", flat=True)
    return frozenset(read | access.on_path | set(beside))


def readable_ids_get(*, access: Access) -> frozenset[int] | None:
    """Every node the person reads in full (`Access.reads`), for suggestions of what they may
    ask about; None when they read the whole tree."""
    if access.whole_tree:
        return None
    return frozenset(access.subtrees | descendant_ids_get(access.subtrees) | access.own)
