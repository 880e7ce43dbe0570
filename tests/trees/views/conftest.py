"""What the page tests share: the demo's small site, logins of each kind, nodes by name."""

from io import StringIO
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client

from trees.models import Node, Person


@pytest.fixture
def sample(settings: Any) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # the logins
    call_command("demo", "--small", "--password", "demo", stdout=StringIO())


def login(client: Client, name: str, *, staff: bool = False, scheduler_user: str = "") -> User:
    user = User.objects.create_user(name, password="pw", is_staff=staff)
    if scheduler_user:
        Person.objects.create(user=user, scheduler_user=scheduler_user)
    client.force_login(user)
    return user


def node(cluster: str, name: str) -> Node:
    return Node.objects.get(cluster__name=cluster, name=name)
