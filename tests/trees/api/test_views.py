import json
import pytest
from django.test import Client
from django.contrib.auth.models import User
from tests.cast import login, node
from accounting.models import NodeHistory, Job, Cycle
from trees.models import Node, Membership, ShareChange

pytestmark = pytest.mark.django_db


@pytest.mark.usefixtures("demo")
def test_explore(client: Client) -> None:
    for u in User.objects.all():
        print(u.username, u.is_staff, list(Membership.objects.filter(user=u).values_list("node__name", "role", "node__cluster__name")))
    print(list(Node.objects.filter(cluster__name="hpc").values_list("id", "name", "kind", "parent_id")))
    print(NodeHistory.objects.count(), Cycle.objects.filter(cluster__name="hpc").count(), Job.objects.count())
    cm = node("hpc", "cond-matter")
    print(NodeHistory.objects.filter(node=cm).count(), list(NodeHistory.objects.filter(node=cm).values_list("at", flat=True))[:5])
    from collections import Counter
    print(Counter(Job.objects.filter(cluster__name="hpc").values_list("state", flat=True)))
    print(Counter(Job.objects.filter(cluster__name="hpc").values_list("node__name", flat=True)).most_common(50))
    print(ShareChange.objects.count(), list(ShareChange.objects.values_list("cluster__name","node_name","changed_at","reason")[:10]))
    client.force_login(User.objects.get(username="bob"))
    print(json.dumps(client.get("/api/me/").json(), indent=1)[:5000])
    client.force_login(User.objects.get(username="carol"))
    print(json.dumps(client.get("/api/clusters/hpc/trends/").json(), indent=1)[:3000])
