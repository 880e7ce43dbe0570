from django.urls import path

from accounting import views, views_whatif

app_name = "accounting"
urlpatterns = [
    path("import/", views.files_import_page, name="import-new"),
    path("clusters/<slug:name>/import/", views.files_import_page, name="import"),
    path("imports/<id:upload_id>/", views.upload_page, name="upload"),
    path("imports/<id:upload_id>/state.json", views.upload_state_json, name="upload-state"),
    path("imports/<id:upload_id>/rejected.csv", views.upload_rejects_csv, name="upload-rejects"),
    path("clusters/<slug:name>/whatif/", views_whatif.whatif_page, name="whatif"),
    path(
        "clusters/<slug:name>/whatif/<id:scenario_id>/",
        views_whatif.scenario_page,
        name="scenario",
    ),
    path(
        "clusters/<slug:name>/whatif/<id:scenario_id>/state.json",
        views_whatif.scenario_state_json,
        name="scenario-state",
    ),
]
