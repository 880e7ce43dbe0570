"""Share editing for admins (PBS): a node's children in one form, the what-if preview, the save
with its reason, the audit trail, and the tree as a resource_group file to hand to PBS.

Slurm keeps shares in slurmdbd (`sacctmgr modify ... set fairshare=`): its clusters are read
from sshare here, so their shares are not edited here (404).
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any, NamedTuple
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.utils import InterfaceError, OperationalError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone

from trees.access import access_get
from trees.downloads import download_header
from trees.engine.edit import WHOLE_EDIT, ChildEdit, EditProblem
from trees.engine.pbs import ROOT_ALIAS, resource_group_parent
from trees.explanations import EXPLANATIONS
from trees.forms import NEW_ROWS, ChildForm, ChildFormSet, EditForm, edit_digest
from trees.models import Cluster, Node, NodeOrigin, Scheduler, ShareChange
from trees.quantities import standing_row
from trees.selectors.audit import share_changes_get, share_changes_since_get
from trees.selectors.edit import defined_children_count_get, tree_edit_preview_get
from trees.selectors.nodes import (
    defined_children_get,
    existing_ids_get,
    group_names_get,
    node_path_get,
)
from trees.selectors.pbs import resource_group_text_get, tree_version_get
from trees.services.tree_edit import EditRefused, TreeChanged, tree_edit
from trees.views.lookup import cluster_node_or_404, cluster_or_404, node_view
from trees.views.parameters import (
    AUDIT_PAGE,
    MAX_EDIT_CHILDREN,
    MAX_NAME,
    MAX_PARENTS_LISTED,
    BadParameter,
    id_parameter,
    page_or_404,
    text_parameter,
)

PREFIX = "child"
logger = logging.getLogger(__name__)
NOT_SAVED = (
    "The database stopped answering while the shares were saved: nothing was saved, the tree"
    " is as it was. Open the edit again in a moment and save it once more."
)


def node_edit(request: HttpRequest, name: str, node_id: int) -> HttpResponse:
    """The node's children: shares, names, parents (a move), removal, new children; `Preview`
    shows every node whose target share or factor would change, `Save` (only of the edit just
    previewed, with a reason) stores it. An edit made on a tree that has changed since is
    refused with the changes, and nothing is saved. A node of more than MAX_EDIT_CHILDREN
    children has no form: the page points to the resource_group file and its import."""
    at = node_view(request, name, node_id, scheduler=Scheduler.PBS)
    if not at.access.admin:
        raise PermissionDenied("editing shares is for admins")
    cluster, node = at.cluster, at.node
    if node.parent_id is not None and node.origin != NodeOrigin.DEFINED:
        raise Http404("only the root and the tree's own entries have children to edit")
    children = defined_children_count_get(node=node)
    if children > MAX_EDIT_CHILDREN:  # a form of 200,000 rows is no form: the file is
        return render(
            request,
            "trees/edit_too_many.html",
            {
                "cluster": cluster,
                "node": node,
                "path": node_path_get(node=node),
                "children": children,
                "most": MAX_EDIT_CHILDREN,
            },
            status=400 if request.method == "POST" else 200,
        )
    here = resource_group_parent(node.name)  # what the rows' parent field calls this node
    if request.method != "POST":
        return _page(request, cluster, node, _fresh(cluster, node, here))

    formset = ChildFormSet(request.POST, prefix=PREFIX)
    form = EditForm(request.POST)
    if not (formset.is_valid() and form.is_valid()):
        if not form.is_valid():  # the hidden fields: not a form this page wrote
            fields = ", ".join(sorted(form.errors))
            raise BadParameter(fields, "missing or malformed: not a form the edit page wrote")
        return _page(request, cluster, node, _Forms(formset, form))
    rows = [child for child in formset if not child.blank()]
    edits = [child.edit() for child in rows]
    data = form.cleaned_data
    forms = _Forms(formset, form)
    digest = edit_digest(data["version"], edits)
    if request.POST.get("action") == "save":
        # The service checks the edit and the tree's version again under its lock: no preview
        # is computed for a save that goes through.
        if data["previewed"] != digest:
            forms.notes.append("The rows changed after their preview: check this one, then save.")
        elif not data["reason"].strip():
            form.add_error("reason", "a reason is required to save")
        else:
            try:
                summary = tree_edit(
                    cluster=cluster,
                    edits=edits,
                    reason=data["reason"],
                    version=data["version"],
                    opened_at=data["opened_at"],
                    user=request.user if isinstance(request.user, User) else None,
                )
            except TreeChanged:
                return _changed(request, cluster, node, here, data["opened_at"], edits)
            except EditRefused as refused:
                forms.attach(rows, refused.problems)
                return _page(request, cluster, node, forms)
            except ValidationError as invalid:
                form.add_error("reason", " ".join(invalid.messages))
            except (OperationalError, InterfaceError):
                # The save's transaction died with its connection: none of it is stored.
                logger.error("share edit of %s not saved: the database went away", cluster.name)
                return render(request, "503.html", {"message": NOT_SAVED}, status=503)
            else:
                messages.success(
                    request,
                    f"Saved: {summary.share_changes} change(s) to the tree of {cluster.name},"
                    " with their reason in the audit trail. Metrics are recomputed; the"
                    " resource_group to hand to PBS is ready to download.",
                )
                return redirect("trees:node", cluster.name, node.pk)  # renames keep the row
    preview = tree_edit_preview_get(cluster=cluster, edits=edits)
    if preview.version != data["version"]:
        return _changed(request, cluster, node, here, data["opened_at"], edits)
    if preview.edited.problems:
        forms.attach(rows, preview.edited.problems)
        return _page(request, cluster, node, forms)
    simulate = _simulation(cluster, node, here, edits)
    return _page(request, cluster, node, forms, preview=preview, digest=digest, simulate=simulate)


def audit_page(request: HttpRequest, name: str) -> HttpResponse:
    """Admins only: every change of the tree's shares, names and places, newest first, with
    who, when and why; `q` keeps those of nodes whose name (now or before) contains it,
    `node` (an id) those of that node and its children."""
    cluster = _admins_cluster(request, name, "the audit trail is for admins")
    text = text_parameter(request, "q", max_length=MAX_NAME) or ""
    node_id = id_parameter(request, "node")
    around = cluster_node_or_404(cluster, node_id) if node_id else None
    changes = share_changes_get(cluster=cluster, name=text, around=around)
    page = page_or_404(request, changes, AUDIT_PAGE)
    return render(
        request,
        "trees/audit.html",
        {
            "cluster": cluster,
            "page": page,
            "q": text,
            "around": around,
            "filters": urlencode({"q": text, **({"node": around.pk} if around else {})}),
            "existing": _existing(cluster, page.object_list),
        },
    )


def resource_group_download(request: HttpRequest, name: str) -> HttpResponse:
    """Admins only: the PBS tree as the resource_group file PBS reads (what
    `export_resource_group` writes), to put in PBS_HOME/sched_priv/."""
    cluster = _admins_cluster(
        request, name, "the resource_group file is for admins", scheduler=Scheduler.PBS
    )
    text = resource_group_text_get(cluster=cluster, now=timezone.now())
    response = HttpResponse(text, content_type="text/plain; charset=utf-8")
    response["Content-Disposition"] = download_header("resource_group")
    return response


class _Simulation(NamedTuple):
    url: str  # "": the edit changes no share
    left_out: int  # the edit's other changes, which a what-if does not replay


class _Forms:
    """The rows and the edit form as the page shows them, with the edit's own messages."""

    def __init__(self, formset: Any, form: EditForm) -> None:
        self.formset = formset
        self.form = form
        self.notes: list[str] = []  # about the edit as a whole

    def attach(self, rows: list[ChildForm], problems: list[EditProblem]) -> None:
        for problem in problems:
            if problem.row == WHOLE_EDIT:
                self.notes.append(problem.message)
            else:
                rows[problem.row].add_error(problem.field, problem.message)


def _admins_cluster(
    request: HttpRequest, name: str, refusal: str, *, scheduler: str | None = None
) -> Cluster:
    cluster = cluster_or_404(name, scheduler=scheduler)
    if not access_get(user=request.user, cluster=cluster).admin:
        raise PermissionDenied(refusal)
    return cluster


def _fresh(cluster: Cluster, node: Node, here: str) -> _Forms:
    """The form on the tree as it is now: a row per child, in resource_group order, and
    blank rows for new children."""
    children = defined_children_get(node=node)
    initial = [
        {"original": child.name, "name": child.name, "parent": here, "shares": child.shares}
        for child in children
    ]
    initial += [{"parent": here}] * NEW_ROWS
    form = EditForm(
        initial={"version": tree_version_get(cluster=cluster), "opened_at": timezone.now()}
    )
    return _Forms(ChildFormSet(initial=initial, prefix=PREFIX), form)


def _changed(
    request: HttpRequest,
    cluster: Cluster,
    node: Node,
    here: str,
    opened_at: datetime,
    edits: list[ChildEdit],
) -> HttpResponse:
    """The tree changed while the admin edited: nothing saved; the changes since, their own
    rows to redo, and the form on the tree as it is now."""
    forms = _fresh(cluster, node, here)
    forms.notes.append(
        "The tree changed while you edited it: nothing was saved. The form now shows the tree"
        " as it is; your rows are listed below it to redo."
    )
    changes = share_changes_since_get(cluster=cluster, since=opened_at)
    return _page(request, cluster, node, forms, changes_since=changes, yours=edits)


def _simulation(cluster: Cluster, node: Node, here: str, edits: list[ChildEdit]) -> _Simulation:
    """The What-if form's address with the edit's share changes as `shares:NAME=N` settings.
    A rename, move, addition or removal is no setting of a what-if: left out, and counted."""
    now = {child.name: child.shares for child in defined_children_get(node=node)}
    settings, left_out = [], 0
    for edit in edits:
        kept = edit.original == edit.name and edit.parent == here and not edit.remove
        if kept and edit.original in now:
            if now[edit.original] != edit.shares:
                settings.append(f"shares:{edit.name}={edit.shares}")
        else:
            left_out += 1
    if not settings:
        return _Simulation("", left_out)
    query = urlencode([("set", text) for text in settings])
    return _Simulation(f"{reverse('accounting:whatif', args=[cluster.name])}?{query}", left_out)


def _existing(cluster: Cluster, changes: Any) -> set[int]:
    """The ids of the changed nodes still in the tree (their names link to their pages)."""
    ids = {change.node_id for change in changes if change.node_id is not None}
    return existing_ids_get(cluster=cluster, ids=ids)


def _page(
    request: HttpRequest,
    cluster: Cluster,
    node: Node,
    forms: _Forms,
    *,
    preview: Any = None,
    digest: str = "",
    changes_since: list[ShareChange] | None = None,
    yours: list[ChildEdit] | None = None,
    simulate: _Simulation | None = None,
) -> HttpResponse:
    parents = group_names_get(cluster=cluster, limit=MAX_PARENTS_LISTED)
    form = forms.form
    version = form.cleaned_data["version"] if form.is_bound else form.initial["version"]
    opened = form.cleaned_data["opened_at"] if form.is_bound else form.initial["opened_at"]
    rows = [standing_row(change) for change in preview.changes] if preview else []
    return render(
        request,
        "trees/edit.html",
        {
            "cluster": cluster,
            "node": node,
            "path": node_path_get(node=node),
            "here": resource_group_parent(node.name),
            "formset": forms.formset,
            "form": form,
            "notes": forms.notes,
            "version": version,
            "opened_at": opened.isoformat(),
            "parents": [ROOT_ALIAS, *parents],
            "preview": preview,
            "entities": [row for row in rows if row["leaf"]],
            "groups": [row for row in rows if not row["leaf"]],
            "digest": digest,
            "changes_since": changes_since,
            "yours": yours,
            "simulate": simulate,
            "explain": EXPLANATIONS,
        },
        status=409 if changes_since is not None else 200,
    )
