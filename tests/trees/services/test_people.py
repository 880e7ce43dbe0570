"""trees.services.people: logins, who they are to the schedulers, their memberships."""

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError

from trees.models import Cluster, Membership, Person, Role
from trees.selectors.clusters import node_get
from trees.services.people import login_set, membership_set, person_set

pytestmark = pytest.mark.django_db


def test_a_login_is_made_then_updated() -> None:
    alice = login_set(username="alice", password="first", admin=True)
    assert (alice.is_staff, alice.is_superuser, alice.check_password("first")) == (
        True,
        True,
        True,
    )
    again = login_set(username="alice", password="second")
    assert again.pk == alice.pk
    assert User.objects.count() == 1
    stored = User.objects.get()
    assert (stored.is_staff, stored.is_superuser) == (False, False)
    assert (stored.check_password("second"), stored.check_password("first")) == (True, False)


def test_a_person_and_memberships_are_held_once(site: Cluster) -> None:
    bob = login_set(username="bob", password="x")
    person_set(user=bob, scheduler_user="ann")
    person_set(user=bob, scheduler_user="bob")
    assert list(Person.objects.values_list("user__username", "scheduler_user")) == [("bob", "bob")]
    chem = node_get(cluster=site, name="chem")
    membership_set(user=bob, node=chem, role=Role.MEMBER)
    membership_set(user=bob, node=chem, role=Role.MANAGER)
    assert list(Membership.objects.values_list("node__name", "role")) == [("chem", "manager")]
    with pytest.raises(ValidationError):
        membership_set(user=bob, node=chem, role="owner")
