"""`make prod-smoke`: the production topology run end to end, on this machine's PostgreSQL and
Redis, in about three minutes (docs/deploy.md, docs/testing.md).

It drives processes as a site runs them, never Django in its own process:

1. a fresh PostgreSQL database, migrated; the static files collected (DEBUG off);
2. gunicorn (DEBUG off, on the loopback), a Celery worker and the Celery beat, three processes,
   with a Redis database of the smoke's own as the broker;
3. a small PBS site through the management commands (resource_group, a cycle every 60 s from a
   qmgr listing), an admin and a `read write` API token;
4. PBS accounting lines of the last hour pushed through the API (and sent again: counted once);
   the beat's cycle accrues them: each user's usage is 1 + ncpus × walltime of their runs,
   read back through the API; every health endpoint healthy;
5. more lines pushed; the worker killed (SIGKILL, its whole process group) in the middle of the
   cycle that accrues them (the smoke holds the `Cycle` ledger's table, so the cycle does all its
   work and waits at its last write: nothing of it is committed); /healthz/worker failing while
   no worker runs; a new worker gets the task again (acks_late) and the usage is exactly the
   total pushed, each slot once in the ledger;
6. a restore drill: pg_dump, pg_restore into another fresh database, a second gunicorn on it
   answering the same tree.

Everything it starts runs in a process group of its own and is stopped by its PID whatever
happens; the whole run is bounded (TIME_LIMIT). It prints each check with its numbers and exits 1,
saying what failed and the end of the logs, on any failure. `--keep` keeps the databases and the
folder of logs.

Settings: PROD_SMOKE_DATABASE_URL (the PostgreSQL server, default the local one's `postgres`
database; the smoke makes its own databases there), PROD_SMOKE_REDIS_URL (default
redis://127.0.0.1:6379/14, a Redis database it empties).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SERVER_URL = os.environ.get(
    "PROD_SMOKE_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres"
)
REDIS_URL = os.environ.get("PROD_SMOKE_REDIS_URL", "redis://127.0.0.1:6379/14")
DATABASE = "fairshare_prod_smoke"
RESTORED = "fairshare_prod_smoke_restored"
CLUSTER = "smoke"
TIME_LIMIT = 240  # seconds for the whole run
PERIOD = 60  # the smoke cluster's scheduler_iteration; the beat ticks each minute too
VISIBILITY = 10  # seconds before the broker gives a dead worker's task to another worker
HEALTH = ("db", "broker", "worker", "beat")

RESOURCE_GROUP = """\
# name  id   parent  shares
chem    10   root    60
phys    11   root    40
u01     101  chem    10
u02     102  chem    10
u03     103  chem    20
u04     104  phys    30
u05     105  phys    10
"""
TOP = "TREEROOT"  # PBS's name for the root (`root` in resource_group); `unknown` beside it
USERS = ("u01", "u02", "u03", "u04", "u05")  # u05 runs nothing: it stays at 1
GROUP_OF = {"u01": "chem", "u02": "chem", "u03": "chem", "u04": "phys", "u05": "phys"}


class Failure(Exception):
    """A check that failed, or a step that could not be done: the message says which."""


@dataclass(frozen=True)
class Run:
    """A job run pushed as a PBS `E` record."""

    job_id: str
    user: str
    ncpus: int
    start: int
    end: int

    @property
    def usage(self) -> int:
        """`ncpus*walltime`, the cluster's fairshare_usage_res, in core-seconds."""
        return self.ncpus * (self.end - self.start)

    def record(self) -> str:
        walltime = self.end - self.start
        hours, rest = divmod(walltime, 3600)
        stamp = datetime.fromtimestamp(self.end, tz=UTC).strftime("%m/%d/%Y %H:%M:%S")
        return (
            f"{stamp};E;{self.job_id};user={self.user} group={GROUP_OF[self.user]}"
            f" project=_pbs_project_default queue=workq ctime={self.start - 60}"
            f" qtime={self.start - 60} etime={self.start - 60} start={self.start}"
            f" end={self.end} Resource_List.ncpus={self.ncpus}"
            f" resources_used.ncpus={self.ncpus}"
            f" resources_used.walltime={hours:02d}:{rest // 60:02d}:{rest % 60:02d}"
            " Exit_status=0"
        )


def runs_made(first: int, now: int, shapes: list[tuple[str, int, int, int]]) -> list[Run]:
    """Runs numbered from `first`, each (user, ncpus, minutes before now it ended, minutes)."""
    return [
        Run(f"{first + n}.smoke", user, ncpus, now - (ago + minutes) * 60, now - ago * 60)
        for n, (user, ncpus, ago, minutes) in enumerate(shapes)
    ]


def expected_usage(runs: list[Run]) -> dict[str, float]:
    """Each user's usage once these runs are accrued: 1 ("1 == 0", as PBS counts) plus theirs."""
    usage = dict.fromkeys(USERS, 1.0)
    for run in runs:
        usage[run.user] += run.usage
    return usage


class Smoke:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.started = time.monotonic()
        self.processes: dict[str, subprocess.Popen[bytes]] = {}
        self.checks = 0
        self.token = ""
        self.web = ""
        self.beat_started = 0.0
        self.env = {
            **os.environ,
            "DEBUG": "0",
            "SECRET_KEY": secrets.token_urlsafe(50),
            "ALLOWED_HOSTS": "127.0.0.1,localhost",
            "SECURE_SSL_REDIRECT": "0",  # plain HTTP on the loopback: no proxy in front
            "SECURE_HSTS_SECONDS": "0",
            "DATABASE_URL": database_url(DATABASE),
            "CELERY_BROKER_URL": REDIS_URL,
            "CELERY_VISIBILITY_TIMEOUT": str(VISIBILITY),
            "STATIC_ROOT": str(folder / "static"),
            "UPLOAD_DIR": str(folder / "uploads"),
            "TIME_ZONE": "UTC",
            "LOG_LEVEL": "INFO",
            "PYTHONUNBUFFERED": "1",
        }
        for name in ("CELERY_RESULT_BACKEND", "CYCLE_QUEUES", "REMOTE_USER_LOGIN"):
            self.env.pop(name, None)

    # -- saying what happened

    def said(self, text: str) -> None:
        print(f"prod-smoke [{time.monotonic() - self.started:5.1f} s] {text}", flush=True)

    def check(self, ok: bool, text: str, failure: str | None = None) -> None:
        if not ok:
            raise Failure(failure or text)
        self.checks += 1
        self.said(f"ok: {text}")

    def remaining(self) -> float:
        return TIME_LIMIT - (time.monotonic() - self.started)

    def wait_for(self, what: str, done: Callable[[], bool], seconds: float) -> float:
        """Seconds until `done()`; a Failure naming `what` after `seconds` (or the time limit)."""
        started = time.monotonic()
        deadline = started + min(seconds, self.remaining())
        while not done():
            for name, process in self.processes.items():
                if process.poll() is not None:
                    raise Failure(f"{name} stopped ({process.returncode}) while waiting: {what}")
            if time.monotonic() > deadline:
                raise Failure(f"timed out after {time.monotonic() - started:.0f} s: {what}")
            time.sleep(0.2)
        return time.monotonic() - started

    # -- processes

    def manage(self, *args: str, env: dict[str, str] | None = None) -> str:
        """`manage.py ARGS` to its end; its standard output."""
        done = subprocess.run(
            [sys.executable, str(ROOT / "manage.py"), *args],
            cwd=ROOT,
            env=env or self.env,
            capture_output=True,
            text=True,
            timeout=max(1.0, self.remaining()),
        )
        if done.returncode != 0:
            raise Failure(f"manage.py {' '.join(args)} exited {done.returncode}: {done.stderr}")
        return done.stdout

    def start(self, name: str, command: list[str], env: dict[str, str] | None = None) -> Path:
        """Start a long-running process in a process group of its own; its log's path."""
        log = self.folder / f"{name.replace(' ', '-')}.log"
        with log.open("ab") as out:
            self.processes[name] = subprocess.Popen(
                command,
                cwd=ROOT,
                env=env or self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own group: its children stop with it
            )
        return log

    def stop(self, name: str, sig: int = signal.SIGTERM, grace: float = 15) -> None:
        process = self.processes.pop(name, None)
        if process is None:
            return
        if process.poll() is None:
            _signal_group(process, sig)
            try:
                process.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                _signal_group(process, signal.SIGKILL)
                process.wait(timeout=10)
        _signal_group(process, signal.SIGKILL)  # whatever of its group outlived it

    def stop_all(self) -> None:
        for name in list(self.processes):
            try:
                self.stop(name, grace=10)
            except Exception as exc:  # keep stopping the others
                print(f"prod-smoke: could not stop {name}: {exc}", file=sys.stderr)

    def worker(self, name: str) -> Path:
        log = self.start(
            name,
            [
                sys.executable, "-m", "celery", "-A", "fairshare_site", "worker",
                "-n", f"{name.replace(' ', '-')}@%h", "--concurrency", "2", "-l", "INFO",
            ],
        )  # fmt: skip
        self.wait_for(f"{name} ready", lambda: " ready." in log.read_text(errors="replace"), 60)
        return log

    def gunicorn(self, name: str, env: dict[str, str]) -> str:
        port = free_port()
        self.start(
            name,
            [
                sys.executable, "-m", "gunicorn", "fairshare_site.wsgi",
                "--bind", f"127.0.0.1:{port}", "--workers", "2", "--timeout", "60",
                "--control-socket", str(self.folder / f"{name.replace(' ', '-')}.ctl"),
            ],
            env,
        )  # fmt: skip
        base = f"http://127.0.0.1:{port}"
        self.wait_for(f"{name} answering {base}/healthz", lambda: _answers(base), 60)
        return base

    # -- HTTP

    def http(
        self, path: str, *, base: str = "", body: bytes | None = None, token: bool = True
    ) -> tuple[int, Any]:
        headers = {"Authorization": f"Bearer {self.token}"} if token else {}
        if body is not None:
            headers["Content-Type"] = "text/plain"
        request = urllib.request.Request((base or self.web) + path, data=body, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                status, raw = answer.status, answer.read()
        except urllib.error.HTTPError as error:
            status, raw = error.code, error.read()
        try:
            return status, json.loads(raw)
        except ValueError:
            return status, raw.decode(errors="replace")

    def usage(self, base: str = "") -> dict[str, float]:
        status, tree = self.http(f"/api/clusters/{CLUSTER}/tree/", base=base)
        if status != 200:
            raise Failure(f"GET /api/clusters/{CLUSTER}/tree/ answered {status}: {tree}")
        return {node["name"]: node["usage"] for node in tree["nodes"]}

    def push(self, runs: list[Run]) -> dict[str, Any]:
        body = "".join(run.record() + "\n" for run in runs).encode()
        status, answer = self.http(f"/api/clusters/{CLUSTER}/accounting/", body=body)
        if status != 200:
            raise Failure(f"the push answered {status}: {answer}")
        return dict(answer)

    def ledger(self) -> list[dict[str, Any]]:
        """The cluster's Cycle rows, oldest first, read by `manage.py shell` as an admin would."""
        code = (
            "import json; from accounting.models import Cycle; print(json.dumps([dict(at="
            "c.at.isoformat(), jobs=c.jobs_accrued, usage=c.usage_added) for c in Cycle."
            f"objects.filter(cluster__name='{CLUSTER}').order_by('at')]))"
        )
        return list(json.loads(self.manage("shell", "-c", code).strip().splitlines()[-1]))


def database_url(name: str) -> str:
    return SERVER_URL.rsplit("/", 1)[0] + "/" + name


def _psycopg_url(url: str) -> str:
    return url.replace("postgres://", "postgresql://", 1)


def databases_made(*names: str) -> None:
    """Drop and create the databases NAMES (empty)."""
    import psycopg

    with psycopg.connect(_psycopg_url(SERVER_URL), autocommit=True) as server:
        for name in names:
            server.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
            server.execute(f"CREATE DATABASE {name}")


def databases_dropped(*names: str) -> None:
    import psycopg

    with psycopg.connect(_psycopg_url(SERVER_URL), autocommit=True) as server:
        for name in names:
            server.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def broker_emptied() -> None:
    import redis

    redis.Redis.from_url(REDIS_URL, socket_timeout=5).flushdb()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _answers(base: str) -> bool:
    try:
        with urllib.request.urlopen(f"{base}/healthz", timeout=2) as answer:
            return bool(answer.status == 200)
    except OSError:
        return False


def _signal_group(process: subprocess.Popen[bytes], sig: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, sig)  # the group's id is its leader's PID


def _timed_out(signum: int, frame: FrameType | None) -> None:
    raise Failure(f"the smoke took over its {TIME_LIMIT} s")


def services_checked() -> None:
    """PostgreSQL, Redis and the PostgreSQL client tools are there, or a Failure saying which."""
    import psycopg
    import redis

    for tool in ("pg_dump", "pg_restore"):
        if shutil.which(tool) is None:
            raise Failure(f"{tool} is not on PATH (Debian: apt-get install postgresql-client)")
    try:
        psycopg.connect(_psycopg_url(SERVER_URL), connect_timeout=5).close()
    except psycopg.Error as error:
        raise Failure(f"no PostgreSQL at PROD_SMOKE_DATABASE_URL {SERVER_URL}: {error}") from None
    try:
        redis.Redis.from_url(REDIS_URL, socket_timeout=5).ping()
    except redis.RedisError as error:
        raise Failure(f"no Redis at PROD_SMOKE_REDIS_URL {REDIS_URL}: {error}") from None


def smoke(s: Smoke) -> None:
    services_checked()
    worker_log = site_started(s)
    site_loaded(s)
    first = accrued_by_the_beat(s)
    survives_a_killed_worker(s, first, worker_log)
    restore_drilled(s)


def site_started(s: Smoke) -> Path:
    """A fresh database, migrated, the static files collected; the beat, gunicorn and a
    worker started (the beat first: its first tick comes a minute after it). The worker's log."""
    clock = time.monotonic()
    databases_made(DATABASE)
    broker_emptied()
    s.manage("migrate", "--no-input", "-v0")
    s.manage("createcachetable", "-v0")  # a no-op on Redis, as here; the deploy's step
    migrated = time.monotonic() - clock
    s.manage("collectstatic", "--no-input", "-v0")
    s.said(
        f"database {DATABASE} made and migrated ({migrated:.1f} s), static files collected"
        f" ({time.monotonic() - clock - migrated:.1f} s)"
    )
    s.start(
        "beat",
        [
            sys.executable, "-m", "celery", "-A", "fairshare_site", "beat", "-l", "INFO",
            "--schedule", str(s.folder / "celerybeat-schedule"),
        ],
    )  # fmt: skip
    s.beat_started = time.monotonic()
    s.web = s.gunicorn("gunicorn", s.env)
    log = s.worker("worker one")
    s.said(f"gunicorn on {s.web} (DEBUG off), a Celery worker and the beat running")
    return log


def site_loaded(s: Smoke) -> None:
    """The site through the management commands a site's admin runs: its tree, its cycle
    period, the first admin and a token to push with."""
    (s.folder / "resource_group").write_text(RESOURCE_GROUP)
    (s.folder / "qmgr").write_text(f"set server scheduler_iteration = {PERIOD}\n")
    s.manage("import_resource_group", "--cluster", CLUSTER, str(s.folder / "resource_group"))
    s.manage("import_qmgr", "--cluster", CLUSTER, str(s.folder / "qmgr"))
    s.manage(
        "createsuperuser", "--no-input", "--username", "admin", "--email", "admin@example.org",
        env={**s.env, "DJANGO_SUPERUSER_PASSWORD": secrets.token_urlsafe(16)},
    )  # fmt: skip
    said = s.manage("api_token", "admin", "--name", "prod-smoke", "--scope", "write")
    s.token = said.strip().splitlines()[-1]
    s.check(
        s.usage() == _with_groups(dict.fromkeys(USERS, 1.0)),
        f"site {CLUSTER} loaded: 2 projects, {len(USERS)} users, each usage 1; an admin and"
        " a `read write` token",
        f"the new site's tree is not as loaded: {s.usage()}",
    )
    status, page = s.http("/accounts/login/", token=False)
    stylesheet = str(page).split('href="/static/', 1)[-1].split('"', 1)[0]
    served, _ = s.http(f"/static/{stylesheet}", token=False)
    s.check(
        status == 200 and served == 200 and "." in stylesheet,
        f"the login page renders with DEBUG off, its static/{stylesheet} served (whitenoise)",
        f"the login page ({status}) or its static file {stylesheet!r} ({served}) failed",
    )


def accrued_by_the_beat(s: Smoke) -> list[Run]:
    """Runs of the last hour pushed (twice), accrued by the beat's cycle; every part healthy.
    The runs."""
    runs = runs_made(
        1000, int(time.time()),
        [("u01", 4, 50, 30), ("u01", 8, 5, 10), ("u02", 16, 20, 25), ("u03", 2, 3, 55),
         ("u04", 32, 10, 15), ("u04", 1, 2, 7)],
    )  # fmt: skip
    answer = s.push(runs)
    s.check(
        answer["ingested"] == len(runs) and answer["rejected"] == 0,
        f"pushed {len(runs)} runs of the last hour: ingested {answer['ingested']}",
        f"the push's answer: {answer}",
    )
    again = s.push(runs)
    s.check(
        again["ingested"] == 0 and again["duplicates"] == len(runs),
        f"the same lines sent again: ingested 0, duplicates {again['duplicates']}",
        f"the second push's answer: {again}",
    )
    expected = expected_usage(runs)
    waited = s.wait_for(
        "the beat's cycle accruing the pushed runs",
        lambda: _leaves(s.usage()) == expected,
        2 * PERIOD + 30,
    )
    s.check(
        True,
        f"the beat's cycle accrued them ({waited:.0f} s after the push, the beat"
        f" {time.monotonic() - s.beat_started:.0f} s old): "
        + ", ".join(f"{user} {expected[user]:.0f}" for user in USERS)
        + " = 1 + ncpus × walltime",
    )
    usage = s.usage()
    s.check(
        usage == _with_groups(expected),
        f"each group's usage is 1 + its leaves': chem {usage['chem']:.0f}, phys"
        f" {usage['phys']:.0f}, {TOP} {usage[TOP]:.0f}",
        f"the groups' usage is not their leaves': {usage}",
    )
    documents = all_healthy(s, "while everything runs")
    for part, document in documents.items():
        s.said(f"/healthz/{part}: {json.dumps(document)}")
    return runs


def survives_a_killed_worker(s: Smoke, first: list[Run], worker_log: Path) -> None:
    """More runs pushed, the worker killed in the cycle that accrues them, a new worker: the
    killed task delivered again, the usage and the ledger exactly what was pushed."""
    # u05 stays idle: its usage stays 1.
    second = runs_made(
        2000, int(time.time()), [("u02", 6, 2, 40), ("u03", 12, 3, 20), ("u01", 24, 4, 2)]
    )
    cycles_before, task = _doomed_cycle(s, worker_log, second)
    s.check(
        s.usage() == _with_groups(expected_usage(first)),
        "nothing of the killed cycle was committed",
    )
    s.check(
        len(s.ledger()) == cycles_before,
        f"the ledger holds {cycles_before} cycle(s), as before the killed one",
    )
    log = s.worker("worker two")
    expected = expected_usage(first + second)
    waited = s.wait_for(
        "a new worker accruing the killed cycle's runs",
        lambda: _leaves(s.usage()) == expected,
        2 * PERIOD + 30,
    )
    s.check(
        True,
        f"a new worker accrued them {waited:.0f} s after starting: "
        + ", ".join(f"{user} {expected[user]:.0f}" for user in USERS),
    )
    done = f"accounting.tasks.run_cycle[{task}] succeeded"
    s.wait_for("the killed task delivered again", lambda: done in log.read_text(), VISIBILITY + 30)
    took, _, result = log.read_text().split(done + " in ", 1)[1].partition("s: ")
    s.check(
        True,
        f"the killed cycle task, delivered again (acks_late), ran in {float(took):.2f} s:"
        f" {result.splitlines()[0]}",
    )
    ledger = s.ledger()
    slots = [datetime.fromisoformat(row["at"]) for row in ledger]
    pushed = sum(run.usage for run in first + second)
    s.check(
        len(set(slots)) == len(slots) and all(slot.timestamp() % PERIOD == 0 for slot in slots),
        f"the ledger: {len(slots)} cycles, each slot once, each on the {PERIOD} s grid",
        f"the ledger repeats or misplaces a slot: {ledger}",
    )
    s.check(
        sum(row["usage"] for row in ledger) == pushed
        and sum(row["jobs"] for row in ledger) == len(first) + len(second),
        f"the ledger's usage added {sum(row['usage'] for row in ledger):.0f} = the"
        f" {len(first) + len(second)} runs pushed ({pushed}), each accrued once",
        f"the ledger does not add up to the {pushed} pushed: {ledger}",
    )
    all_healthy(s, "with the new worker")


def restore_drilled(s: Smoke) -> None:
    """On a quiet database (no beat, no worker): pg_dump, pg_restore into a fresh database, a
    second gunicorn on it answering the same tree."""
    s.stop("beat")
    s.stop("worker two")
    clock = time.monotonic()
    dump = s.folder / "fairshare.dump"
    _tool(s, "pg_dump", "--format=custom", f"--file={dump}", _psycopg_url(database_url(DATABASE)))
    databases_made(RESTORED)
    _tool(
        s, "pg_restore", "--no-owner", "--exit-on-error",
        f"--dbname={_psycopg_url(database_url(RESTORED))}", str(dump),
    )  # fmt: skip
    restored = s.gunicorn("restored gunicorn", {**s.env, "DATABASE_URL": database_url(RESTORED)})
    _, tree = s.http(f"/api/clusters/{CLUSTER}/tree/")
    status, copy = s.http(f"/api/clusters/{CLUSTER}/tree/", base=restored)
    s.check(
        status == 200 and copy == tree,
        f"restore drill: pg_dump ({dump.stat().st_size / 1024:.0f} KiB), pg_restore into"
        f" {RESTORED}, a second gunicorn answers the same tree ({len(tree['nodes'])} nodes,"
        f" {time.monotonic() - clock:.1f} s)",
        f"the restored database's tree differs ({status}): {copy} against {tree}",
    )
    status, _ = s.http("/healthz/db", base=restored, token=False)
    s.check(status == 200, "the restored site's /healthz/db: 200")


def all_healthy(s: Smoke, when: str) -> dict[str, Any]:
    """Every health endpoint 200, or a Failure; their documents."""
    answers = {part: s.http(f"/healthz/{part}", token=False) for part in HEALTH}
    s.check(
        all(status == 200 for status, _ in answers.values()),
        f"health {when}: "
        + ", ".join(f"/healthz/{part} {status}" for part, (status, _) in answers.items()),
        f"a health endpoint is failing {when}: {answers}",
    )
    return {part: document for part, (_, document) in answers.items()}


def _doomed_cycle(s: Smoke, log: Path, runs: list[Run]) -> tuple[int, str]:
    """Push `runs`, then kill the worker (SIGKILL, its whole group) while the beat's next cycle
    runs, once that cycle has done its work and waits to write its ledger row: the cycles in
    the ledger before, and the killed cycle task's id.

    The smoke holds the ledger's table (EXCLUSIVE: reads go on, inserts wait) in a transaction
    of its own, from before the push, so the cycle stops at its last statement, every usage
    change made but none committed. Then the worker dies, the smoke lets go, and the cycle's
    backend, its client gone, rolls back.
    """
    import psycopg

    with psycopg.connect(_psycopg_url(database_url(DATABASE))) as holder:
        holder.execute("LOCK TABLE accounting_cycle IN EXCLUSIVE MODE")
        ours = holder.info.backend_pid
        with psycopg.connect(_psycopg_url(database_url(DATABASE)), autocommit=True) as watcher:
            row = watcher.execute(
                "SELECT count(*) FROM accounting_cycle c JOIN trees_cluster t"
                " ON c.cluster_id = t.id WHERE t.name = %s",
                [CLUSTER],
            ).fetchone()
            before = int(row[0]) if row else 0
            answer = s.push(runs)
            s.check(answer["ingested"] == len(runs), f"pushed {len(runs)} more runs")

            def waiting() -> list[int]:
                rows = watcher.execute(
                    "SELECT pid FROM pg_stat_activity WHERE datname = current_database()"
                    " AND pid <> %s AND wait_event_type = 'Lock'"
                    " AND query LIKE 'INSERT INTO \"accounting_cycle\"%%'",
                    [ours],
                ).fetchall()
                return [row[0] for row in rows]

            s.wait_for("the next cycle to reach its ledger row", lambda: bool(waiting()), 90)
            (backend,) = waiting()
            status, _ = s.http("/healthz/worker", token=False)
            s.check(status == 200, "/healthz/worker 200 while the worker runs a cycle")
            s.stop("worker one", signal.SIGKILL)
            s.said(
                f"worker one killed (SIGKILL to its process group) mid-cycle: the cycle's"
                f" backend {backend} had accrued and waited on its ledger row"
            )
            status, document = s.http("/healthz/worker", token=False)
            s.check(
                status == 503,
                f"/healthz/worker {status} with no worker: {json.dumps(document)}",
                f"/healthz/worker answered {status} with no worker running: {document}",
            )
            holder.rollback()  # let go of the ledger: the orphaned cycle finds its client gone
            s.wait_for(
                "the killed cycle's backend to end",
                lambda: (
                    not watcher.execute(
                        "SELECT 1 FROM pg_stat_activity WHERE pid = %s", [backend]
                    ).fetchall()
                ),
                30,
            )
    received = [
        line for line in log.read_text().splitlines() if "accounting.tasks.run_cycle[" in line
    ]
    if not received:
        raise Failure("the killed worker's log shows no cycle task received")
    return before, received[-1].split("accounting.tasks.run_cycle[", 1)[1].split("]", 1)[0]


def _leaves(usage: dict[str, float]) -> dict[str, float]:
    return {name: value for name, value in usage.items() if name in USERS}


def _with_groups(leaves: dict[str, float]) -> dict[str, float]:
    """The tree's usage with these leaves: a group's is 1 plus its leaves' that are not 1."""
    usage = dict(leaves)
    for group in ("chem", "phys"):
        usage[group] = 1 + sum(
            leaves[user] for user in USERS if GROUP_OF[user] == group and leaves[user] != 1
        )
    usage[TOP] = 1 + sum(value for value in leaves.values() if value != 1)
    usage["unknown"] = 1.0
    return usage


def _tool(s: Smoke, *command: str) -> None:
    done = subprocess.run(command, capture_output=True, text=True, timeout=max(1.0, s.remaining()))
    if done.returncode != 0:
        raise Failure(f"{command[0]} exited {done.returncode}: {done.stderr}")


def left_behind_removed(folder: Path) -> None:
    """Drop the databases, empty the broker's database, remove the folder; never raises (the
    service that failed the run may be gone)."""
    try:
        databases_dropped(DATABASE, RESTORED)
    except Exception as error:
        print(f"prod-smoke: could not drop the databases: {error}", file=sys.stderr)
    try:
        broker_emptied()
    except Exception as error:
        print(f"prod-smoke: could not empty {REDIS_URL}: {error}", file=sys.stderr)
    shutil.rmtree(folder, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--keep", action="store_true", help="keep the databases and the logs")
    keep = parser.parse_args().keep
    folder = Path(tempfile.mkdtemp(prefix="prod-smoke-"))
    s = Smoke(folder)
    signal.signal(signal.SIGALRM, _timed_out)
    signal.alarm(TIME_LIMIT)
    failed: str | None = None
    try:
        smoke(s)
    except Failure as failure:
        failed = str(failure)
    except Exception:  # a service missing, a tool's error: said with its traceback
        failed = traceback.format_exc()
    finally:
        signal.alarm(0)
        s.stop_all()
    if failed is not None:
        print(f"prod-smoke: FAILED: {failed}", file=sys.stderr)
        for log in sorted(folder.glob("*.log")):
            tail = log.read_text(errors="replace").splitlines()[-25:]
            print(f"--- {log.name} (last lines)", *tail, sep="\n", file=sys.stderr)
    if keep:
        s.said(f"kept: databases {DATABASE}, {RESTORED}; logs in {folder}")
    else:
        left_behind_removed(folder)
    if failed is not None:
        return 1
    s.said(f"OK: {s.checks} checks passed in {time.monotonic() - s.started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
