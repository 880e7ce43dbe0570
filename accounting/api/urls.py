from django.contrib.auth.decorators import login_not_required
from django.urls import path

from accounting.api import views

urlpatterns = [
    path(
        "clusters/<slug:name>/accounting/",
        login_not_required(views.PushAccounting.as_view()),
        name="api-accounting",
    ),
]
