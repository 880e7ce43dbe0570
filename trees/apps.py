from django.apps import AppConfig


class TreesConfig(AppConfig):
    name = "trees"
    verbose_name = "Fairshare trees"
