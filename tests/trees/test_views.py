from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from django.test import Client


@pytest.mark.django_db
def test_the_index_lists_each_cluster_with_its_pbsfs_listing(client: Client, settings: Any) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # the logins
    call_command("demo", "--small", "--password", "demo", stdout=StringIO())
    page = client.get("/").content.decode()
    assert "<h2>whitepaper" in page
    assert "<h2>forum" in page
    assert "Fairshare usage units are in: cput" in page
    assert "L5        : Grp: 210    cgrp: 211  Shares: 10     Usage: 100    Perc: 10.000%" in page


@pytest.mark.django_db
def test_the_index_without_clusters_says_how_to_load_one(client: Client) -> None:
    assert "manage.py demo" in client.get("/").content.decode()
