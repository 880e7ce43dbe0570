"""Real Celery workers, consuming from the local Redis, run cycles on PostgreSQL.

They need PostgreSQL (DATABASE_URL=postgres://..., as the second run of `.ci/run`) and Redis
at INTEGRATION_REDIS_URL (default redis://127.0.0.1:6379/15, a database they empty); each test
skips, saying which, when one is not there.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from django.db import connection
from kombu import pools

from accounting.models import Cycle, Job
from accounting.parsers.records import JobState
from accounting.services.cycles import cycle_run
from accounting.tasks import run_cycle, run_due_cycles
from fairshare_site.celery import app
from trees.engine.pbs import GroupDef
from trees.models import Cluster, Node
from trees.services.pbs import resource_group_import
from trees.services.tree_json import tree_json_write

pytestmark = pytest.mark.django_db(transaction=True)

REDIS_URL = os.environ.get("INTEGRATION_REDIS_URL", "redis://127.0.0.1:6379/15")
ROOT = Path(__file__).resolve().parents[2]
T0 = 1_772_352_000  # 2026-03-01 08:00 UTC


def at(seconds: int) -> datetime:
    return datetime.fromtimestamp(seconds, tz=UTC)


@pytest.fixture
def services() -> Iterator[str]:
    """The test database's URL for the workers; the app sending to Redis, not eagerly."""
    if connection.vendor != "postgresql":
        pytest.skip("integration tests need PostgreSQL: run with DATABASE_URL=postgres://...")
    import redis

    try:
        broker = redis.Redis.from_url(REDIS_URL, socket_timeout=2)
        broker.ping()
    except redis.RedisError as exc:
        pytest.skip(f"integration tests need Redis at {REDIS_URL}: {exc}")
    broker.flushdb()
    settings = connection.settings_dict
    url = (
        f"postgres://{settings['USER'] or 'postgres'}@{settings['HOST'] or '127.0.0.1'}:"
        f"{settings['PORT'] or 5432}/{settings['NAME']}"
    )
    saved = {key: app.conf[key] for key in ("broker_url", "result_backend", "task_always_eager")}
    app.conf.update(broker_url=REDIS_URL, result_backend=REDIS_URL, task_always_eager=False)
    forget_connections()
    try:
        yield url
    finally:
        app.conf.update(saved)
        forget_connections()
        broker.flushdb()


def forget_connections() -> None:
    """Make the app connect again, to the broker and result backend it is now configured with."""
    pools.reset()  # kombu's producer pools, shared by broker URL
    if app._pool is not None:
        app._pool.force_close_all()
        app._pool = None
    app.amqp._producer_pool = None
    app._local.__dict__.pop("backend", None)


Worker = Callable[..., subprocess.Popen[bytes]]


@pytest.fixture
def worker(services: str, tmp_path: Path) -> Iterator[Worker]:
    """Start a Celery worker (solo pool: the task runs in the process we may kill), taking the
    default queue or the queues given (`queues="cycles.big"`, as `-Q`), with settings of the
    environment given besides."""
    started: list[subprocess.Popen[bytes]] = []

    def start(name: str, queues: str | None = None, **settings: str) -> subprocess.Popen[bytes]:
        log = tmp_path / f"{name}.log"
        env = {
            **os.environ,
            "DATABASE_URL": services,
            "CELERY_BROKER_URL": REDIS_URL,
            "CELERY_RESULT_BACKEND": REDIS_URL,
            "CELERY_VISIBILITY_TIMEOUT": "3",
            **settings,
        }
        command = [
            sys.executable, "-m", "celery", "-A", "fairshare_site", "worker", "--pool=solo",
            "-n", f"{name}@%h", "--without-gossip", "--without-mingle", "-l", "INFO",
            "-f", str(log), *(["-Q", queues] if queues else []),
        ]  # fmt: skip
        process = subprocess.Popen(command, cwd=ROOT, env=env)
        started.append(process)
        deadline = time.monotonic() + 60
        while "ready." not in (log.read_text() if log.exists() else ""):
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"worker {name} did not start: {log.read_text()[-2000:]}")
            time.sleep(0.1)
        return process

    yield start
    for process in started:
        if process.poll() is None:
            process.kill()
        process.wait()


def tree_site(name: str, users: int = 2) -> Cluster:
    """Two groups of `users` users each; each user has a 4-core hour ending at T0 + 1 h."""
    groups = [GroupDef("chem", 10, "root", 60), GroupDef("phys", 11, "root", 40)]
    groups += [GroupDef(f"u{n}", 20 + n, ("chem", "phys")[n % 2], 1) for n in range(users)]
    resource_group_import(cluster_name=name, groups=groups, pbs_messages=[], source="test")
    cluster = Cluster.objects.get(name=name)
    Job.objects.bulk_create(
        Job(
            cluster=cluster, job_id=str(n), state=JobState.ENDED, entity=f"u{n}", ncpus=4,
            walltime=3600, start=at(T0), end=at(T0 + 3600), usage=4 * 3600.0,
            source_file="test", source_line=n,
        )
        for n in range(users)
    )  # fmt: skip
    return cluster


def only_the_cycle_queued(*clusters: Cluster) -> None:
    """List the trees here and take off the broker the listing tasks their stores queued, so
    that the one transaction a worker opens is the cycle the test disturbs."""
    for cluster in clusters:
        tree_json_write(cluster_id=cluster.pk)
    app.control.purge()


def usages(cluster: Cluster) -> dict[str, float]:
    return dict(Node.objects.filter(cluster=cluster).values_list("name", "usage"))


def wait_for(check: Callable[[], bool], seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            pytest.fail("timed out")
        time.sleep(0.05)


def test_a_worker_runs_the_cycles_it_is_sent(worker: Worker) -> None:
    cluster = tree_site("site")
    worker("one")
    results = [
        run_cycle.apply_async(args=[cluster.pk, at(moment).isoformat()])
        for moment in (T0, T0 + 1800, T0 + 3600)
    ]
    outcomes: list[dict[str, Any]] = [result.get(timeout=60) for result in results]
    assert [outcome["usage_added"] for outcome in outcomes] == [0.0, 14_400.0, 14_400.0]
    assert usages(cluster)["u0"] == 1 + 14_400
    assert Cycle.objects.filter(cluster=cluster).count() == 3


def test_two_workers_racing_on_one_cycle_accrue_once(worker: Worker) -> None:
    cluster = tree_site("site", users=400)
    cycle_run(cluster=cluster, now=at(T0))
    worker("one")
    worker("two")
    moment = at(T0 + 3600).isoformat()
    results = [run_cycle.apply_async(args=[cluster.pk, moment]) for _ in range(2)]
    outcomes = [result.get(timeout=60) for result in results]
    assert sorted("done_before" in outcome for outcome in outcomes) == [False, True]
    assert Cycle.objects.filter(cluster=cluster).count() == 2
    assert usages(cluster)["u0"] == 1 + 14_400
    assert usages(cluster)["TREEROOT"] == 1 + 400 * (1 + 14_400)


def test_a_worker_killed_mid_cycle_leaves_nothing_and_the_retry_catches_up(
    worker: Worker,
) -> None:
    users = 5000
    disturbed, undisturbed = tree_site("disturbed", users), tree_site("undisturbed", users)
    for cluster in (disturbed, undisturbed):
        cycle_run(cluster=cluster, now=at(T0))
    moment = at(T0 + 1800)
    cycle_run(cluster=undisturbed, now=moment)
    before = usages(disturbed)
    only_the_cycle_queued(disturbed, undisturbed)

    first = worker("doomed")
    result = run_cycle.apply_async(args=[disturbed.pk, moment.isoformat()])

    def in_cycle() -> bool:
        with connection.cursor() as cursor:
            return bool(_cycle_backends(cursor))

    wait_for(in_cycle)
    time.sleep(0.1)  # well into it: the cycle of 5,000 users takes about a second
    first.send_signal(signal.SIGKILL)
    first.wait()
    wait_for(lambda: not in_cycle(), 10)  # PostgreSQL rolled the cycle back
    assert Cycle.objects.filter(cluster=disturbed).count() == 1
    assert usages(disturbed) == before

    worker("after")  # the unacknowledged task comes back to the queue and runs again
    assert result.get(timeout=60)["usage_added"] == users * 7200.0
    assert usages(disturbed) == usages(undisturbed)
    assert Cycle.objects.filter(cluster=disturbed).count() == 2


def test_a_database_connection_lost_mid_cycle_is_retried(worker: Worker, tmp_path: Path) -> None:
    """What a worker sees of PostgreSQL restarting: its connection ends in the middle."""
    users = 5000
    cluster, twin = tree_site("lost", users), tree_site("twin", users)
    for each in (cluster, twin):
        cycle_run(cluster=each, now=at(T0))
    moment = at(T0 + 1800)
    cycle_run(cluster=twin, now=moment)
    only_the_cycle_queued(cluster, twin)
    worker("one")
    result = run_cycle.apply_async(args=[cluster.pk, moment.isoformat()])
    with connection.cursor() as cursor:
        wait_for(lambda: bool(_cycle_backends(cursor)))
        time.sleep(0.1)
        for pid in _cycle_backends(cursor):
            cursor.execute("SELECT pg_terminate_backend(%s)", [pid])
    assert result.get(timeout=90)["usage_added"] == users * 7200.0  # the retry's
    said = (tmp_path / "one.log").read_text()
    assert "retry: Retry in" in said
    assert "OperationalError('terminating connection due to administrator command')" in said
    assert usages(cluster) == usages(twin)
    assert Cycle.objects.filter(cluster=cluster).count() == 2


def test_a_worker_whose_broker_connection_drops_reconnects(worker: Worker) -> None:
    import redis

    cluster = tree_site("site")
    worker("one")
    assert run_cycle.apply_async(args=[cluster.pk, at(T0).isoformat()]).get(timeout=60)
    broker = redis.Redis.from_url(REDIS_URL)
    # Every client connection but this one: the worker's consumer and its result backend.
    broker.client_kill_filter(_type="normal", skipme=True)
    later = run_cycle.apply_async(args=[cluster.pk, at(T0 + 3600).isoformat()])
    assert later.get(timeout=90)["usage_added"] == 2 * 14_400.0
    assert usages(cluster)["u0"] == 1 + 14_400


def test_the_beat_puts_each_clusters_cycle_on_its_queue(services: str, settings: Any) -> None:
    import redis

    big, small = tree_site("big"), tree_site("small")
    only_the_cycle_queued(big, small)
    settings.CYCLE_QUEUES = {"big": "cycles.big"}

    assert run_due_cycles.apply().get() == ["big", "small"]

    broker = redis.Redis.from_url(REDIS_URL)
    queued = {
        queue: [
            (message["headers"]["task"], message["headers"]["argsrepr"])
            for message in map(json.loads, broker.lrange(queue, 0, -1))
        ]
        for queue in ("cycles.big", "celery")
    }
    assert queued == {
        "cycles.big": [("accounting.tasks.run_cycle", f"[{big.pk}]")],
        "celery": [("accounting.tasks.run_cycle", f"[{small.pk}]")],
    }


def test_workers_of_two_queues_run_their_clusters_cycles_and_one_cluster_at_a_time(
    worker: Worker, tmp_path: Path
) -> None:
    """A worker on `cycles.big` and one on the default queue: each runs the cycles sent to its
    queue, and the same cycle sent to both (a routing changed between two beats, a cycle run
    by hand) accrues once, the cluster's row holding the second until the first is done."""
    big, small = tree_site("big", users=400), tree_site("small")
    cycle_run(cluster=big, now=at(T0))
    worker("big", queues="cycles.big")
    worker("rest")
    moment = at(T0 + 3600).isoformat()
    twice = [
        run_cycle.apply_async(args=[big.pk, moment], queue=queue)
        for queue in ("cycles.big", "celery")
    ]
    alone = run_cycle.apply_async(args=[small.pk, moment], queue="celery")

    outcomes = [result.get(timeout=60) for result in twice]
    assert sorted("done_before" in outcome for outcome in outcomes) == [False, True]
    assert alone.get(timeout=60)["usage_added"] == 2 * 14_400.0
    assert usages(big)["TREEROOT"] == 1 + 400 * (1 + 14_400)
    assert Cycle.objects.filter(cluster=big).count() == 2
    logs = {name: (tmp_path / f"{name}.log").read_text() for name in ("big", "rest")}
    assert twice[0].id in logs["big"]
    assert twice[1].id in logs["rest"]
    assert alone.id in logs["rest"]
    assert twice[0].id not in logs["rest"]
    assert alone.id not in logs["big"]


def _cycle_backends(cursor: Any) -> list[int]:
    """The backends, other than ours, with a transaction open on the test database."""
    cursor.execute(
        "SELECT pid FROM pg_stat_activity WHERE datname = current_database()"
        " AND pid <> pg_backend_pid() AND xact_start IS NOT NULL"
    )
    return [row[0] for row in cursor.fetchall()]
