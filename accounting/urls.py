from django.urls import path

from accounting import views

app_name = "accounting"
urlpatterns = [
    path("import/", views.files_import_page, name="import-new"),
    path("clusters/<slug:name>/import/", views.files_import_page, name="import"),
]
