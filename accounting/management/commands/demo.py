import os
import secrets
import time
from collections.abc import Mapping
from datetime import datetime, timedelta
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

from django.core.management.base import CommandParser
from django.utils import timezone

from accounting.models import IngestSource
from accounting.services.demo import (
    DEMO_SAMPLES,
    accelerator_config_import,
    cycles_run,
    demo_sample_load,
    pbs_site_import,
)
from accounting.services.ingest import ingest
from accounting.services.replay import replay
from accounting.synthetic_accelerator import (
    ACCELERATOR_NAME,
    FSGROUPS,
    PREEMPT_RULES,
    SPAN,
    accelerator_site_generate,
    jobs_csv,
)
from accounting.synthetic_files import site_files_write
from accounting.synthetic_site import (
    CLUSTERS,
    HOUR,
    HPC,
    YEAR,
    ClusterSpec,
    GeneratedJob,
    Site,
    SiteUser,
    Stage,
    jobs_generate,
    member_of_two_projects,
    site_generate,
)
from trees.engine.times import epoch_seconds, epoch_time
from trees.formats.qmgr import parse_qmgr_print
from trees.management.commands._base import FairshareCommand
from trees.models import Role, Scheduler
from trees.selectors.clusters import cluster_get, node_get
from trees.services.clusters import cluster_delete, cluster_settings_set
from trees.services.people import login_set, membership_set, person_set
from trees.services.priority_config import qmgr_import

SEED = 3  # of the generated site: the same seed, end and size give the same site
SMALL_DAYS = 14
PASSWORD_VARIABLE = "DEMO_PASSWORD"
LOGINS = ("alice", "bob", "carol")
ACCELERATOR_CYCLES = timedelta(days=1)  # the Accelerator cluster's cycles run over the last day


class Command(FairshareCommand):
    help = (
        "Load the demo site, replacing the one there: three small sample clusters (the PBS"
        " white paper's tree `whitepaper` and the forum post's `forum` with their usage, and"
        " the Slurm Fair Tree cluster `fairtree` from sshare output), then a generated site of"
        " 5 organizations, 30 projects and 300 users on two PBS clusters with a year of jobs"
        " up to now (truncated to the hour). Its files (sched_config, resource_group, a PBS"
        " accounting log a day) are written to a temporary directory and go through the"
        " imports, the ingestion and a replay of every 10-minute cycle. `hpc` has seed 003's"
        " policy: usage ncpus*walltime charged per project (fairshare_entity Account_Name, so"
        " the leaves are the projects, under their organizations), decay 0.5 every 168 h, its"
        " job_sort_formula. `gpu` has PBS's defaults, euser and decay 0.5 every 24 h, and"
        " charges ngpus*walltime: its leaves are the users, under their projects (PBS names an"
        " entity once, so a user in two projects is a leaf under their own project and charged"
        " there for both). Then an Altair Accelerator cluster, `vnc`: FairShare groups of job"
        " classes under /class and a day of jobs to the same end, as vovfsgroup genconfig's"
        " configuration, a jobs export (CSV) and Altair's two FairShare preemption rules,"
        " imported and ingested, then a cycle every 10 minutes of the day. Last the logins,"
        " with their passwords: alice (admin), bob (member of two projects, running jobs as one"
        " of the generated users, on vnc too) and carol (manager of bob's organization)."
    )

    clock = 0.0  # when the step being timed began (time.perf_counter)

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--small",
            action="store_true",
            help=f"generate the last {SMALL_DAYS} days of the year only (a few seconds, for tests)",
        )
        parser.add_argument(
            "--now", help="when the generated jobs end (ISO 8601; default: now), to the hour"
        )
        parser.add_argument(
            "--password",
            help=f"the logins' password (default: ${PASSWORD_VARIABLE}, else a random one each)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        begun = self.clock = time.perf_counter()
        moment = self.moment("--now", options["now"]) or timezone.now()
        end = epoch_time(epoch_seconds(moment) // HOUR * HOUR)
        days = SMALL_DAYS if options["small"] else YEAR
        samples = sorted(folder.name for folder in DEMO_SAMPLES.iterdir())
        names = [*samples, *(spec.name for spec in CLUSTERS), ACCELERATOR_NAME]
        removed = [name for name in names if cluster_delete(name=name)]
        self._done(f"clusters removed: {', '.join(removed) or 'none'}")
        self._samples()
        self._done("sample clusters loaded")
        site = site_generate(seed=SEED)
        with TemporaryDirectory(prefix="fairshare-demo-") as folder:
            jobs = {
                spec.name: self._generated(spec, site, end, days, Path(folder)) for spec in CLUSTERS
            }
            # bob is shown by his projects' standing, which the CPU cluster charges.
            member = member_of_two_projects(site, jobs[HPC.name], epoch_seconds(end))
            self._accelerator(site, member, end, Path(folder))
        self._logins(site, member, login_passwords(options["password"], os.environ))
        self._done("logins set")
        self.stdout.write(f"demo built in {time.perf_counter() - begun:.1f} s")

    def _done(self, what: str) -> None:
        """Say what the step just ended did and how long it took."""
        now = time.perf_counter()
        self.stdout.write(f"{what} ({now - self.clock:.1f} s)")
        self.clock = now

    def _samples(self) -> None:
        for folder in sorted(DEMO_SAMPLES.iterdir()):
            loaded = demo_sample_load(folder)
            if loaded.scheduler == Scheduler.SLURM:
                self.stdout.write(
                    f"loaded Slurm cluster {loaded.name}: {loaded.entries} associations"
                )
            else:
                self.stdout.write(f"loaded cluster {loaded.name}: {loaded.entries} tree entries")

    def _generated(
        self, spec: ClusterSpec, site: Site, end: datetime, days: int, folder: Path
    ) -> list[GeneratedJob]:
        """One generated cluster: its files written, imported, ingested and replayed."""
        at = epoch_seconds(end)
        jobs = jobs_generate(site, spec, end=end, seed=SEED, days=days)
        files = site_files_write(folder, site, spec, jobs, at)
        self._done(
            f"{spec.name}: {len(jobs):,} jobs of {days} days to {end.isoformat()} generated,"
            f" {files.records:,} accounting records written",
        )
        groups = pbs_site_import(
            spec.name, files.sched_config, files.resource_group, f"generated {spec.name}"
        )
        qmgr_import(
            cluster_name=spec.name,
            parsed=parse_qmgr_print(files.qmgr.read_bytes()),
            source=f"generated {spec.name}",
        )
        cluster_settings_set(
            cluster=cluster_get(name=spec.name),
            # Nodes are left uncounted: the generated jobs share nodes, and a what-if's node
            # pool would give each a whole one.
            values={
                "cores": spec.hosts * spec.host_cores,
                "gpus": spec.hosts * spec.host_gpus or None,
            },
            reason=f"the demo's machine: {spec.hosts} nodes of {spec.host_cores} cores"
            + (f" and {spec.host_gpus} GPUs" if spec.host_gpus else ""),
            user=None,
        )
        cluster = cluster_get(name=spec.name)
        self._done(
            f"{spec.name}: tree of {len(groups.entries)} entries imported (usage"
            f" {cluster.fairshare_usage_res} per {cluster.fairshare_entity}, decay"
            f" {cluster.decay_factor:g} every {_hours(cluster.decay_interval)})",
        )
        result = ingest(
            cluster_name=spec.name,
            source=IngestSource.PBS_ACCOUNTING,
            paths=[str(path) for path in files.accounting],
        )
        running = sum(1 for job in jobs if job.state(at) == Stage.RUNNING)
        unknown = ", ".join(result.unknown_entities) or "none"
        self._done(
            f"{spec.name}: {result.run.read:,} records ingested from {len(files.accounting)}"
            f" files: {result.run.ingested:,} runs ended, {running:,} still running,"
            f" {result.run.rejected} rejected; entities under unknown: {unknown}",
        )
        replayed = replay(cluster=cluster, start=end - timedelta(days=days), until=end)
        self._done(
            f"{spec.name}: {replayed.cycles:,} cycles of"
            f" {cluster.scheduler_iteration.total_seconds() / 60:g} minutes replayed"
            f" ({replayed.decays} decay{'' if replayed.decays == 1 else 's'}),"
            f" {replayed.history_rows:,} history rows kept",
        )
        return jobs

    def _accelerator(self, site: Site, member: SiteUser, end: datetime, folder: Path) -> None:
        """The Accelerator cluster: a day of jobs to `end` (bob's among them) written as the
        jobs export, its FairShare configuration and preemption rules as files; imported,
        ingested, then a cycle every scheduler_iteration of the day."""
        name = ACCELERATOR_NAME
        users = [user.name for user in site.users if user.activity > 0]
        generated = accelerator_site_generate(seed=SEED, end=end, member=member.name, users=users)
        root = folder / name
        root.mkdir()
        (root / "fsgroups.tcl").write_text(FSGROUPS)
        (root / "rules.tcl").write_text(PREEMPT_RULES)
        export = root / "jobs.csv"
        export.write_text(jobs_csv(generated.jobs))
        at = epoch_seconds(end)
        os.utime(export, (at, at))  # the export's time is its file's: it was taken at the end
        counts = ", ".join(
            f"{generated.count(status):,} {status.lower()}"
            for status in ("RUNNING", "SUSPENDED", "QUEUED", "DONE", "FAILED")
        )
        self._done(
            f"{name}: {len(generated.jobs):,} Accelerator jobs of {SPAN // HOUR} hours to"
            f" {end.isoformat()} generated ({counts}), exported as CSV"
        )
        configured = accelerator_config_import(
            name=name,
            fsgroups=root / "fsgroups.tcl",
            rules=root / "rules.tcl",
            source=f"generated {name}",
            now=end,
        )
        self._done(
            f"{name}: {configured.defined} FairShare groups (vovfsgroup genconfig) and"
            f" {configured.rules} preemption rules imported"
        )
        result = ingest(cluster_name=name, source=IngestSource.ACCELERATOR, paths=[str(export)])
        self._done(
            f"{name}: {result.run.read:,} jobs ingested ({result.run.running:,} running or"
            f" suspended, {result.run.queued:,} queued), {result.run.rejected} rejected;"
            f" {len(result.created_nodes)} users' leaves G.user made",
        )
        cluster = cluster_get(name=name)
        period = cluster.scheduler_iteration
        ran = cycles_run(cluster=cluster, first=end - ACCELERATOR_CYCLES, last=end)
        self._done(
            f"{name}: {ran.cycles:,} cycles of {period.total_seconds() / 60:g} minutes run,"
            f" {ran.history_rows:,} history rows kept"
        )

    def _logins(self, site: Site, member: SiteUser, passwords: Mapping[str, str]) -> None:
        """alice the admin, bob a member of two projects, carol the manager of his
        organization; on every generated cluster."""
        login_set(username="alice", password=passwords["alice"], admin=True)
        bob = login_set(username="bob", password=passwords["bob"])
        person_set(user=bob, scheduler_user=member.name)
        carol = login_set(username="carol", password=passwords["carol"])
        organization = site.project(member.projects[0]).organization
        for spec in CLUSTERS:
            cluster = cluster_get(name=spec.name)
            for project in member.projects:
                node = node_get(cluster=cluster, name=project)
                membership_set(user=bob, node=node, role=Role.MEMBER)
            node = node_get(cluster=cluster, name=organization)
            membership_set(user=carol, node=node, role=Role.MANAGER)
        clusters = " and ".join(spec.name for spec in CLUSTERS)
        projects = " and ".join(member.projects)
        self.stdout.write(f"logins on {clusters} (password after the name):")
        self.stdout.write(f"  alice {passwords['alice']}  admin (staff and superuser)")
        self.stdout.write(
            f"  bob   {passwords['bob']}  member of {projects}; runs jobs as {member.name}"
        )
        self.stdout.write(f"  carol {passwords['carol']}  manager of {organization}")


def login_passwords(option: str | None, environ: Mapping[str, str]) -> dict[str, str]:
    """Each login's password: --password, else $DEMO_PASSWORD, else a random one each."""
    chosen = option or environ.get(PASSWORD_VARIABLE, "")
    return {name: chosen or secrets.token_urlsafe(9) for name in LOGINS}


def _hours(interval: timedelta) -> str:
    return f"{interval.total_seconds() / HOUR:g} h"
