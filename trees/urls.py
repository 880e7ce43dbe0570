from django.urls import path

from trees import views

app_name = "trees"
urlpatterns = [
    path("", views.index, name="index"),
]
