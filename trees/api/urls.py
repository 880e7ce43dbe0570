"""The API's addresses (DESIGN §6). DRF checks who asks (a token or the session), so Django's
login-required middleware lets these through and each answers 401 itself; the docs are pages
for a browser: anonymous readers go to the login page."""

from django.contrib.auth.decorators import login_not_required, login_required
from django.urls import path
from drf_spectacular.views import (
    SpectacularAPIView,
    SpectacularRedocView,
    SpectacularSwaggerSplitView,
)

from trees.api import edits, views
from trees.urls import RowId  # noqa: F401  (registers the `id` and `jobid` converters)

urlpatterns = [
    path("schema/", login_not_required(SpectacularAPIView.as_view()), name="api-schema"),
    path(
        "docs/",
        login_required(SpectacularSwaggerSplitView.as_view(url_name="api-schema")),
        name="api-docs",
    ),
    path(
        "redoc/",
        login_required(SpectacularRedocView.as_view(url_name="api-schema")),
        name="api-redoc",
    ),
    path("clusters/", login_not_required(views.ClusterList.as_view()), name="api-clusters"),
    path(
        "clusters/<slug:name>/",
        login_not_required(views.ClusterDetail.as_view()),
        name="api-cluster",
    ),
    path(
        "clusters/<slug:name>/tree/",
        login_not_required(views.ClusterTree.as_view()),
        name="api-tree",
    ),
    path(
        "clusters/<slug:name>/compare/",
        login_not_required(views.Compare.as_view()),
        name="api-compare",
    ),
    path(
        "clusters/<slug:name>/audit/", login_not_required(views.Audit.as_view()), name="api-audit"
    ),
    path(
        "clusters/<slug:name>/trends/",
        login_not_required(views.Trends.as_view()),
        name="api-trends",
    ),
    path("nodes/<id:node_id>/", login_not_required(views.NodeDetail.as_view()), name="api-node"),
    path(
        "nodes/<id:node_id>/history/",
        login_not_required(views.History.as_view()),
        name="api-node-history",
    ),
    path(
        "nodes/<id:node_id>/jobs/",
        login_not_required(views.NodeJobs.as_view()),
        name="api-node-jobs",
    ),
    path(
        "clusters/<slug:name>/shares/",
        login_not_required(views.Shares.as_view()),
        name="api-shares",
    ),
    path(
        "clusters/<slug:name>/share-edits/",
        login_not_required(edits.ShareEdits.as_view()),
        name="api-share-edits",
    ),
    path(
        "clusters/<slug:name>/jobs/",
        login_not_required(views.ClusterJobs.as_view()),
        name="api-cluster-jobs",
    ),
    path(
        "jobs/<slug:cluster>/<jobid:job_id>/priority/",
        login_not_required(views.JobPriorityDetail.as_view()),
        name="api-job-priority",
    ),
    path("me/", login_not_required(views.Me.as_view()), name="api-me"),
]
