from django.contrib.auth.decorators import login_not_required
from django.urls import path

from accounting.api import views
from trees.urls import RowId  # noqa: F401  (registers the `id` converter)

urlpatterns = [
    path(
        "clusters/<slug:name>/accounting/",
        login_not_required(views.PushAccounting.as_view()),
        name="api-accounting",
    ),
    path(
        "clusters/<slug:name>/simulations/",
        login_not_required(views.Simulations.as_view()),
        name="api-simulations",
    ),
    path(
        "clusters/<slug:name>/simulations/<id:scenario_id>/",
        login_not_required(views.Simulation.as_view()),
        name="api-simulation",
    ),
]
