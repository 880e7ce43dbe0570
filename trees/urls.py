from django.urls import path, register_converter

from trees.views import (
    cluster_settings,
    compare,
    edit,
    jobs,
    standing,
    tree,
    trends,
    usage_loss,
)
from trees.views.parameters import MAX_ID


class RowId:
    """A row id in a path: an id beyond what the database holds matches nothing (404), where
    Django's `int` would hand it to the database (an OverflowError, a 500)."""

    regex = "[0-9]{1,19}"

    def to_python(self, value: str) -> int:
        number = int(value)
        if number > MAX_ID:
            raise ValueError(value)
        return number

    def to_url(self, value: int) -> str:
        return str(value)


class JobId:
    """A scheduler's job id in a path: digits with an array index (`4529746[4]`), a server
    (`17.pbs01`), Slurm's `4103947_100` or `+` of a heterogeneous job; at most what the
    database holds. Anything else (`<script>`, a path) matches nothing: the site's 404."""

    regex = r"[A-Za-z0-9_.+\[\]-]{1,128}"

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value


register_converter(RowId, "id")
register_converter(JobId, "jobid")

app_name = "trees"
urlpatterns = [
    path("", standing.landing, name="index"),
    path("clusters/<slug:name>/", tree.cluster_overview, name="cluster"),
    path("clusters/<slug:name>/tree.json", tree.tree_json, name="tree-json"),
    path("clusters/<slug:name>/listing.txt", tree.cluster_listing_text, name="listing"),
    path("clusters/<slug:name>/nodes/<id:node_id>/", tree.node_page, name="node"),
    path(
        "clusters/<slug:name>/nodes/<id:node_id>/history.json",
        tree.node_history_json,
        name="node-history",
    ),
    path("me/", standing.my_standing, name="me"),
    path("clusters/<slug:name>/compare/", compare.compare_page, name="compare"),
    path("clusters/<slug:name>/compare/names.json", compare.compare_names, name="compare-names"),
    path(
        "clusters/<slug:name>/nodes/<id:node_id>/recovery.json",
        tree.node_recovery_json,
        name="node-recovery",
    ),
    path("clusters/<slug:name>/trends/", trends.trends_page, name="trends"),
    path("clusters/<slug:name>/nodes/<id:node_id>/edit/", edit.node_edit, name="node-edit"),
    path("clusters/<slug:name>/audit/", edit.audit_page, name="audit"),
    path(
        "clusters/<slug:name>/settings/",
        cluster_settings.cluster_settings_page,
        name="settings",
    ),
    path(
        "clusters/<slug:name>/resource_group",
        edit.resource_group_download,
        name="resource-group",
    ),
    path(
        "clusters/<slug:name>/usage-loss/",
        usage_loss.usage_loss_page,
        name="usage-loss",
    ),
    path("clusters/<slug:name>/queue/", jobs.queue_page, name="queue"),
    path("clusters/<slug:name>/jobs/<jobid:job_id>/", jobs.job_page, name="job"),
    path(
        "clusters/<slug:name>/jobs/<jobid:job_id>/whatif.json",
        jobs.job_whatif_json,
        name="job-whatif",
    ),
    path("healthz", tree.healthz, name="healthz"),
]
