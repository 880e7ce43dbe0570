"""What the page tests share: the demo's small site, logins of each kind, nodes by name."""

from collections.abc import Iterator
from io import StringIO
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client, override_settings

from trees.models import Node, Person

FAST_HASHER = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(scope="module")
def sample_site(django_db_setup: Any, django_db_blocker: Any) -> Iterator[None]:
    """The demo's small site, built once a test module (about 2 s) and removed after it; each
    test still runs in a transaction rolled back after it, so the site is the same for all."""
    with django_db_blocker.unblock(), override_settings(PASSWORD_HASHERS=FAST_HASHER):
        call_command("demo", "--small", "--password", "demo", stdout=StringIO())
    yield
    with django_db_blocker.unblock():
        call_command("flush", "--no-input", stdout=StringIO())


@pytest.fixture
def sample(sample_site: None, db: None, settings: Any) -> None:
    settings.PASSWORD_HASHERS = FAST_HASHER  # the logins the tests add


def login(client: Client, name: str, *, staff: bool = False, scheduler_user: str = "") -> User:
    user = User.objects.create_user(name, password="pw", is_staff=staff)
    if scheduler_user:
        Person.objects.create(user=user, scheduler_user=scheduler_user)
    client.force_login(user)
    return user


def node(cluster: str, name: str) -> Node:
    return Node.objects.get(cluster__name=cluster, name=name)
