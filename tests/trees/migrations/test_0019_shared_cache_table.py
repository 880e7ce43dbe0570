import importlib

import pytest
from django.db import connection

migration = importlib.import_module("trees.migrations.0019_shared_cache_table")


@pytest.mark.django_db(transaction=True)
def test_migrate_makes_the_database_cache_s_table_createcachetable_would(settings) -> None:
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.db.DatabaseCache",
            "LOCATION": "throttle_counts",
        }
    }
    assert "throttle_counts" not in connection.introspection.table_names()
    try:
        with connection.schema_editor() as editor:
            migration.shared_cache_table_create(None, editor)
            migration.shared_cache_table_create(None, editor)  # made once, then left
        assert "throttle_counts" in connection.introspection.table_names()
    finally:
        with connection.cursor() as cursor:
            cursor.execute("DROP TABLE IF EXISTS throttle_counts")
