"""The database cache's table (CACHES without Redis: the API throttle's counts), made by
`migrate` as well, so that a site that upgrades without running `createcachetable` does not
answer every API request with an error."""

from django.core.management import call_command
from django.db import migrations


def shared_cache_table_create(apps, schema_editor):
    # A no-op when CACHES is Redis; createcachetable skips a table that exists.
    call_command("createcachetable", database=schema_editor.connection.alias, verbosity=0)


class Migration(migrations.Migration):
    dependencies = [("trees", "0018_pbs_preemption")]

    operations = [migrations.RunPython(shared_cache_table_create, migrations.RunPython.noop)]
