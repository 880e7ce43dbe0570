"""People: dashboard logins, who they are to the schedulers, and their memberships."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction

from trees.models import Membership, Node, Person, Role


def login_set(*, username: str, password: str, admin: bool = False) -> User:
    """A dashboard login with this password, made or updated; an admin is Django staff and
    superuser, anyone else neither. The password is taken as given (the demo prints it)."""
    with transaction.atomic():
        user, _ = User.objects.get_or_create(username=username)
        user.set_password(password)
        user.is_active = True
        user.is_staff = user.is_superuser = admin
        user.save()
    return user


def person_set(*, user: User, scheduler_user: str) -> Person:
    """Who `user` is to the schedulers: the user name their jobs run under."""
    person, _ = Person.objects.update_or_create(
        user=user, defaults={"scheduler_user": scheduler_user}
    )
    return person


def membership_set(*, user: User, node: Node, role: str) -> Membership:
    """`user` is a member or manager of `node` (once: a second call changes the role)."""
    if role not in Role.values:
        raise ValidationError({"role": f"{role!r} is not one of {', '.join(Role.values)}"})
    membership, _ = Membership.objects.update_or_create(
        user=user, node=node, defaults={"role": role}
    )
    return membership
