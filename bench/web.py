"""The web side on PostgreSQL: the tree JSON of a 10,000-node tree against a trivial endpoint of
the same server, and one node's one-year history JSON.

Run with `make bench` (PostgreSQL at 127.0.0.1:5432, or BENCH_DATABASE_URL naming a server
whose `postgres` database may be used to create `fairshare_bench_web`). The application runs
with production settings (DEBUG off) in a WSGI server thread and is asked over HTTP. Prints
medians; asserts nothing. Targets (issue 6): the tree JSON within 10x the trivial endpoint;
the history JSON under 100 ms; (issue 20) the API's tree within 2x of tree.json, its 304
within 2x of the trivial endpoint, /metrics of 10,000 nodes under 1 s. Whole-tree readers'
tree JSON comes from the listing a task writes after every store (TreeJsonRow); the bench
also times that task, and the same answer built from the nodes, as readers get it until the
task has run.

Then a bounded load run under gunicorn, as the site is served: LOAD_CLIENTS threads on the
loopback send LOAD_REQUESTS requests in all, half the whole tree's JSON and half a project's
page, each with a timeout, the run with a deadline; it prints the errors (a status other than
200, or no answer: 0 is the target) and each endpoint's p50, p95 and slowest answer, and exits
1 if any request failed.
"""

from __future__ import annotations

import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, make_server

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.postgres import database_url, run_on_fresh_database  # noqa: E402  (after the path)
from fairshare_site.local_server import healthz_awaited  # noqa: E402

DATABASE = "fairshare_bench_web"
ORGANIZATIONS, PROJECTS_EACH, USERS_EACH = 10, 10, 99  # 10 + 100 + 9,900 nodes below the root
ROUNDS = 21
LOAD_CLIENTS, LOAD_REQUESTS = 20, 2000
LOAD_WORKERS = 4  # gunicorn's processes: two per core of the 2-core machine
LOAD_TIMEOUT_S, LOAD_DEADLINE_S = 60, 600


class _Quiet(WSGIRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


def median_ms(
    fetch: Callable[[], bytes], before: Callable[[], None] = lambda: None
) -> tuple[float, int]:
    """The median time of a request, `before` run untimed ahead of each; and the answer's size."""
    size = len(fetch())  # warm
    timings = []
    for _ in range(ROUNDS):
        before()
        started = time.perf_counter()
        fetch()
        timings.append(time.perf_counter() - started)
    return statistics.median(timings) * 1000, size


def child() -> None:
    os.environ.update(
        DATABASE_URL=database_url(DATABASE),
        DEBUG="0",
        SECRET_KEY="bench-only-" + "k" * 50,
        ALLOWED_HOSTS="127.0.0.1",
        SECURE_SSL_REDIRECT="0",
    )
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "fairshare_site.settings")
    import warnings

    import django

    # DEBUG off serves static files from STATIC_ROOT, which collectstatic has not filled here.
    warnings.filterwarnings("ignore", message="No directory at")
    django.setup()
    from django.contrib.auth.models import User
    from django.core.wsgi import get_wsgi_application
    from django.test import Client
    from django.utils import timezone

    from accounting.models import NodeHistory
    from bench.cycle import history_instants
    from trees.engine.pbs import GroupDef
    from trees.models import Cluster, Node
    from trees.services.pbs import resource_group_import
    from trees.services.tree_json import tree_json_write

    rng = random.Random(6)
    groups, cgroup = [], 10
    for org in range(ORGANIZATIONS):
        groups.append(GroupDef(f"org{org}", cgroup := cgroup + 1, "root", rng.randint(1, 100)))
        for project in range(PROJECTS_EACH):
            name = f"p{org}-{project}"
            groups.append(GroupDef(name, cgroup := cgroup + 1, f"org{org}", rng.randint(1, 50)))
            for user in range(USERS_EACH):
                user_name = f"u{org}-{project}-{user}"
                groups.append(GroupDef(user_name, cgroup := cgroup + 1, name, rng.randint(1, 10)))
    resource_group_import(cluster_name="bench", groups=groups, pbs_messages=[], source="bench")
    cluster = Cluster.objects.get(name="bench")
    nodes = Node.objects.filter(cluster=cluster).count()
    node = Node.objects.get(cluster=cluster, name="u5-5-50")
    now = timezone.now()
    NodeHistory.objects.bulk_create(
        NodeHistory(node=node, at=at, usage=rng.lognormvariate(12, 2.5), fairshare_perc=1e-4,
                    fairshare_tree_usage=1e-4, fairshare_factor=0.5)
        for at in history_instants(now - timedelta(minutes=1))
    )  # fmt: skip

    user = User.objects.create_user("bench", password="unused-" + "p" * 20, is_staff=True)
    client = Client()
    client.force_login(user)
    cookie = f"sessionid={client.cookies['sessionid'].value}"

    server = make_server("127.0.0.1", 0, get_wsgi_application(), handler_class=_Quiet)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_port}"

    def getter(path: str, headers: dict[str, str] | None = None) -> Callable[[], bytes]:
        def fetch() -> bytes:
            sent = {"Cookie": cookie, **(headers or {})}
            request = urllib.request.Request(base + path, headers=sent)
            try:
                with urllib.request.urlopen(request) as response:
                    return bytes(response.read())
            except urllib.error.HTTPError as answer:
                if answer.code != 304:  # urllib's "error" for Not Modified: the aim here
                    raise
                return b""

        return fetch

    trivial, _ = median_ms(getter("/healthz"))
    every, size = median_ms(getter("/clusters/bench/tree.json?levels=3"))
    first, first_size = median_ms(getter("/clusters/bench/tree.json"))
    api, api_size = median_ms(getter("/api/clusters/bench/tree/"))
    tag = _etag(base + "/api/clusters/bench/tree/", cookie)
    unchanged, _ = median_ms(getter("/api/clusters/bench/tree/", {"If-None-Match": tag}))
    metrics, metrics_size = median_ms(getter("/metrics"))
    writes = []
    for _ in range(5):
        Cluster.objects.filter(pk=cluster.pk).update(tree_json_at=None)
        started = time.perf_counter()
        tree_json_write(cluster_id=cluster.pk)
        writes.append(time.perf_counter() - started)
    Cluster.objects.filter(pk=cluster.pk).update(tree_json_at=None)  # as until its task has run
    built, _ = median_ms(getter("/clusters/bench/tree.json?levels=3"))
    print(f"tree of {nodes:,} nodes; the server is a WSGI thread with DEBUG off")
    print(f"trivial endpoint /healthz: {trivial:.2f} ms (median of {ROUNDS})")
    print(
        f"tree.json?levels=3, every node ({size / 2**20:.1f} MiB), from the listing:"
        f" {every:.1f} ms, {every / trivial:.1f}x the trivial endpoint (median of {ROUNDS};"
        f" target: within 10x)"
    )
    print(
        f"the page's first tree.json (2 levels, {first_size / 1024:.0f} KiB): {first:.1f} ms,"
        f" {first / trivial:.1f}x"
    )
    print(
        f"listing the tree, the task each store queues: {statistics.median(writes) * 1000:.0f} ms"
        f" (median of 5); every node's tree.json built from the nodes instead, as until that"
        f" task has run: {built:.1f} ms, {built / trivial:.1f}x"
    )
    history, size = median_ms(getter(f"/clusters/bench/nodes/{node.pk}/history.json?range=1y"))
    print(
        f"one node's one-year history.json: {history:.1f} ms, {size / 1024:.0f} KiB (median of"
        f" {ROUNDS}; target: under 100 ms)"
    )
    print(
        f"the API's whole tree, /api/clusters/bench/tree/ ({api_size / 2**20:.1f} MiB):"
        f" {api:.1f} ms, {api / every:.2f}x tree.json of every node (target: within 2x)"
    )
    print(
        f"the same with its ETag in If-None-Match (304, no body): {unchanged:.2f} ms,"
        f" {unchanged / trivial:.2f}x /healthz (target: within 2x)"
    )
    print(
        f"/metrics for {nodes:,} nodes (METRICS_MAX_DEPTH 3: every node;"
        f" {metrics_size / 2**20:.1f} MiB): {metrics:.0f} ms (target: under 1 s)"
    )
    instants = history_instants(now - timedelta(minutes=1))
    started = time.perf_counter()
    rows = history_of_every_node(cluster, instants, but=node)
    print(
        f"a year of history for every node: {rows:,} rows ({len(instants)} kept cycles)"
        f" written in {time.perf_counter() - started:.0f} s"
    )
    tree = "/api/clusters/bench/tree/?at="
    for label, at in (
        ("a day 100 days ago, between two kept cycles", now - timedelta(days=100, hours=5)),
        ("the last cycle", now),
    ):
        then, then_size = median_ms(getter(tree + urllib.parse.quote(at.isoformat())))
        print(
            f"the API's tree at {label} ({then_size / 2**20:.1f} MiB): {then:.0f} ms"
            f" (median of {ROUNDS}; target: under 1 s)"
        )
    far, _ = median_ms(
        refused(base + tree + urllib.parse.quote("9999-12-31T23:59:59+14:00"), cookie)
    )
    print(f"the tree at 9999-12-31T23:59:59+14:00, a 400 (after the history): {far:.1f} ms")
    server.shutdown()
    project = Node.objects.get(cluster=cluster, name="p5-5")
    paths = ["/clusters/bench/tree.json?levels=3", f"/clusters/bench/nodes/{project.pk}/"]
    if not load_run(paths, cookie):
        sys.exit(1)


def history_of_every_node(cluster: Any, instants: list[datetime], but: Any) -> int:
    """The history a cycle writes, at each of `instants`, for every node of the cluster but
    `but` (which has its own), with the cycles' ledger; in the database, as cycles write it.
    The rows written."""
    from django.db import connection

    from accounting.models import Cycle, NodeHistory
    from accounting.services.history import history_partitions_make
    from trees.models import Node

    history_partitions_make(first=instants[0], last=instants[-1])
    Cycle.objects.bulk_create(Cycle(cluster=cluster, at=at, started_at=at) for at in instants)
    history, nodes = NodeHistory._meta.db_table, Node._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {history} (node_id, at, usage, fairshare_perc, fairshare_tree_usage,"
            " fairshare_factor) SELECT n.id, t.at, n.usage, n.fairshare_perc,"
            f" n.fairshare_tree_usage, n.fairshare_factor FROM {nodes} n"
            " CROSS JOIN unnest(%s::timestamptz[]) AS t(at) WHERE n.cluster_id = %s AND n.id <> %s",
            [instants, cluster.pk, but.pk],
        )
        written = cursor.rowcount
        cursor.execute(f"ANALYZE {history}")  # as autovacuum would have, long before a year
    return int(written)


def refused(url: str, cookie: str) -> Callable[[], bytes]:
    """A fetch of an address that answers 400, its body."""

    def fetch() -> bytes:
        try:
            urllib.request.urlopen(urllib.request.Request(url, headers={"Cookie": cookie}))
        except urllib.error.HTTPError as answer:
            if answer.code != 400:
                raise
            return bytes(answer.read())
        raise RuntimeError(f"{url} answered 200")

    return fetch


def _etag(url: str, cookie: str) -> str:
    with urllib.request.urlopen(urllib.request.Request(url, headers={"Cookie": cookie})) as got:
        return str(got.headers["ETag"])


def load_run(paths: list[str], cookie: str) -> bool:
    """LOAD_REQUESTS requests, alternating `paths`, from LOAD_CLIENTS threads against gunicorn
    on the loopback; prints the figures, and whether every request got its 200."""
    with tempfile.TemporaryDirectory(prefix="fairshare-bench-") as folder:
        env = {**os.environ, "STATIC_ROOT": str(Path(folder) / "static")}
        manage = [sys.executable, str(ROOT / "manage.py")]
        subprocess.run([*manage, "collectstatic", "--no-input", "-v0"], check=True, env=env)
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        log = (Path(folder) / "gunicorn.log").open("wb")
        server = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "fairshare_site.wsgi", "--bind",
             f"127.0.0.1:{port}", "--workers", str(LOAD_WORKERS), "--no-control-socket"],
            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        try:
            base = f"http://127.0.0.1:{port}"
            _wait_until_up(base, server)
            return _load(base, paths, cookie)
        finally:
            server.terminate()
            try:
                server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
            log.close()


def _wait_until_up(base: str, server: subprocess.Popen[bytes]) -> None:
    problem = healthz_awaited(base, server, 60)
    if problem is not None:
        raise RuntimeError(f"gunicorn: {problem}")


def _load(base: str, paths: list[str], cookie: str) -> bool:
    timings: dict[str, list[float]] = {path: [] for path in paths}
    errors: list[str] = []
    lock = threading.Lock()
    counter = iter(range(LOAD_REQUESTS))
    deadline = time.monotonic() + LOAD_DEADLINE_S

    def client() -> None:
        while time.monotonic() < deadline:
            with lock:
                number = next(counter, None)
            if number is None:
                return
            path = paths[number % len(paths)]
            request = urllib.request.Request(base + path, headers={"Cookie": cookie})
            started = time.perf_counter()
            try:
                with urllib.request.urlopen(request, timeout=LOAD_TIMEOUT_S) as answer:
                    answer.read()
                    status = answer.status
            except urllib.error.HTTPError as exc:
                status = exc.code
            except OSError as exc:
                with lock:
                    errors.append(f"{path}: {exc}")
                continue
            elapsed = time.perf_counter() - started
            with lock:
                if status == 200:
                    timings[path].append(elapsed)
                else:
                    errors.append(f"{path}: HTTP {status}")

    started = time.perf_counter()
    threads = [threading.Thread(target=client) for _ in range(LOAD_CLIENTS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - started
    done = sum(len(times) for times in timings.values())
    print(
        f"load under gunicorn ({LOAD_WORKERS} workers, DEBUG off): {LOAD_CLIENTS} clients,"
        f" {done + len(errors):,} requests in {wall:.1f} s ({(done + len(errors)) / wall:.0f}/s),"
        f" {len(errors)} errors"
    )
    for path, times in timings.items():
        if times:
            ordered = sorted(times)
            p50 = ordered[len(ordered) // 2] * 1000
            p95 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))] * 1000
            print(
                f"  {path}: {len(times):,} answers, p50 {p50:.0f} ms, p95 {p95:.0f} ms,"
                f" slowest {ordered[-1] * 1000:.0f} ms"
            )
    for error in errors[:10]:
        print(f"  error: {error}")
    return not errors and done == LOAD_REQUESTS


if __name__ == "__main__":
    run_on_fresh_database(__file__, DATABASE, child)
