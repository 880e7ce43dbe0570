from django.urls import path

from trees import views

app_name = "trees"
urlpatterns = [
    path("", views.index, name="index"),
    path("clusters/<slug:name>/", views.cluster_overview, name="cluster"),
    path("clusters/<slug:name>/tree.json", views.tree_json, name="tree-json"),
    path("clusters/<slug:name>/nodes/<int:node_id>/", views.node_page, name="node"),
    path(
        "clusters/<slug:name>/nodes/<int:node_id>/history.json",
        views.node_history_json,
        name="node-history",
    ),
]
