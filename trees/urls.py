from django.urls import path

from trees.views import compare, edit, standing, tree, trends

app_name = "trees"
urlpatterns = [
    path("", tree.index, name="index"),
    path("clusters/<slug:name>/", tree.cluster_overview, name="cluster"),
    path("clusters/<slug:name>/tree.json", tree.tree_json, name="tree-json"),
    path("clusters/<slug:name>/nodes/<int:node_id>/", tree.node_page, name="node"),
    path(
        "clusters/<slug:name>/nodes/<int:node_id>/history.json",
        tree.node_history_json,
        name="node-history",
    ),
    path("me/", standing.my_standing, name="me"),
    path("clusters/<slug:name>/compare/", compare.compare_page, name="compare"),
    path(
        "clusters/<slug:name>/nodes/<int:node_id>/recovery.json",
        tree.node_recovery_json,
        name="node-recovery",
    ),
    path("clusters/<slug:name>/trends/", trends.trends_page, name="trends"),
    path("clusters/<slug:name>/nodes/<int:node_id>/edit/", edit.node_edit, name="node-edit"),
    path("clusters/<slug:name>/audit/", edit.audit_page, name="audit"),
    path(
        "clusters/<slug:name>/resource_group",
        edit.resource_group_download,
        name="resource-group",
    ),
    path("healthz", tree.healthz, name="healthz"),
]
