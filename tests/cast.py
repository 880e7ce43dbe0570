"""The tests' people, and small factories for the few rows a test needs.

The cast is the demo's (the `demo` command makes the same three logins):
"""

from __future__ import annotations

from django.contrib.auth.models import User
from django.test import Client

from accounting.models import Job
from accounting.services.demo import DEMO_SAMPLES, SampleLoaded, demo_sample_load
from trees.models import Membership, Node, Role
from trees.services.people import login_set, membership_set, person_set

ALICE = "alice"  # the admin: Django staff; reads, edits, imports and audits every cluster
BOB = "bob"  # a member of two projects; his jobs run as one of the generated users
CAROL = "carol"  # the manager of bob's organization: its trends and its members' standing

PASSWORD = "pw"
FAST_HASHER = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # logins made by the hundred


def login_made(name: str, *, admin: bool = False, scheduler_user: str = "") -> User:
    """A login (admin: Django staff), whose jobs run as `scheduler_user` when given."""
    user = login_set(username=name, password=PASSWORD, admin=admin)
    if scheduler_user:
        person_set(user=user, scheduler_user=scheduler_user)
    return user


def login(client: Client, name: str, *, staff: bool = False, scheduler_user: str = "") -> User:
    """A login made (staff: an admin) and logged in on `client`."""
    user = login_made(name, admin=staff, scheduler_user=scheduler_user)
    client.force_login(user)
    return user


def member_made(user: User, node: Node, role: str = Role.MEMBER) -> Membership:
    return membership_set(user=user, node=node, role=role)


def samples_made() -> list[SampleLoaded]:
    """The demo's three sample clusters (whitepaper, forum: PBS; fairtree: Slurm), with their
    usage, in a few hundredths of a second: no generated site, no login."""
    return [demo_sample_load(folder) for folder in sorted(DEMO_SAMPLES.iterdir())]


def node(cluster: str, name: str) -> Node:
    """The node of that name (PBS names are unique in a cluster)."""
    return Node.objects.get(cluster__name=cluster, name=name)


def demo_job(state: str) -> Job:
    """The demo's job in that state charged to a node: the running one with the most usage
    accrued so far, or a queued one (the demo's logs end with both)."""
    jobs = Job.objects.filter(state=state, node__isnull=False).select_related("node__cluster")
    if state == "running":
        jobs = jobs.filter(accrued__gt=0).order_by("-accrued")
    job = jobs.first()
    assert job is not None, f"the demo's generated logs end with jobs still {state}"
    assert job.node is not None
    return job
