"""`make pbs-oracle`: a real OpenPBS on this machine, and what it does, as test cases.

It builds OpenPBS from a source checkout (`--src`, or OPENPBS_SRC: a clone of
github.com/openpbs/openpbs, a work tree or a bare git directory; `--commit` picks the commit of
a git directory, HEAD by default) into `--prefix` (/opt/fairshare-pbs-oracle by default; a build
of the same commit there is reused): `./autogen.sh`, `./configure --prefix`, `make`, `make
install`, pbs_iff and pbs_rcp made setuid as PBS's packages make them. One change is made to
the source first: OpenPBS's get_host_ips (src/lib/Libnet/hnls.c) and tpp_platform.c skip
loopback addresses, so on a machine whose only interface is the loopback the server finds no
address of its own and does not start; both lines are made to keep them.

Then it runs pbs_server, pbs_sched, pbs_comm and one pbs_mom on this host with a PBS_HOME of
their own under /var/lib/fairshare-pbs-oracle/ (pbs_mom refuses a home below a world-writable
folder such as /tmp), through PBS's own pbs_postinstall and pbs_init.d with PBS_CONF_FILE
pointing at that folder; PBS's datastore is its own PostgreSQL instance (the machine's
PostgreSQL binaries, port 15007, started by pbs_dataservice). The default ports must be free.

For each case of pbs_site.py it configures the scheduler and the server, captures what PBS
did and what our imports read, and writes a folder of tests/captures/pbs/ with case.json.
Whatever happens, it stops every daemon (pbs_init.d stop, then any process left of this
installation or this PBS_HOME by PID) and removes the folder (`--keep` keeps it).

Needs root (the daemons, qsub as other users) and Debian's build packages (`--install`
installs them with apt-get): the list is BUILD_PACKAGES.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pbs_site as spec
from oracle_kit import OracleError, apt_installed, folder_left, guarded, log

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "tests" / "captures" / "pbs"
PREFIX = Path("/opt/fairshare-pbs-oracle")
HOMES = Path("/var/lib/fairshare-pbs-oracle")
BUILD_PACKAGES = (
    "autoconf", "automake", "libtool", "pkg-config", "gcc", "g++", "make", "libhwloc-dev",
    "libical-dev", "libedit-dev", "libx11-dev", "libxt-dev", "libxext-dev", "libxft-dev",
    "libcjson-dev", "swig", "python3-dev", "postgresql-server-dev-all", "postgresql-contrib",
    "libssl-dev", "libexpat1-dev", "libncurses-dev", "zlib1g-dev", "tcl-dev", "tk-dev",
    "libpam0g-dev", "postgresql",
)  # fmt: skip
PORTS = (15001, 15002, 15003, 15007, 17001)  # server, mom, mom's manager, datastore, comm
LOOPBACK_LINE = "if (ntohl(sa->sin_addr.s_addr) >> 24 == IN_LOOPBACKNET)"
LOOPBACK_FILES = ("src/lib/Libnet/hnls.c", "src/lib/Libtpp/tpp_platform.c")
TIME_LIMIT = 5400  # seconds for the whole run, a build included
COMMAND_LIMIT = 120
LOG_LINE = re.compile(
    r"(\d\d/\d\d/\d{4} \d\d:\d\d:\d\d);([0-9a-f]{4});([^;]*);([^;]*);([^;]*);(.*)"
)


def run(
    *command: str,
    env: dict[str, str] | None = None,
    check: bool = True,
    cwd: Path | None = None,
    limit: int = COMMAND_LIMIT,
) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        command, env=env, capture_output=True, text=True, timeout=limit, check=False, cwd=cwd
    )
    if check and done.returncode != 0:
        raise OracleError(
            f"{' '.join(command)} exited {done.returncode}: {(done.stderr or done.stdout).strip()}"
        )
    return done


# The build


def source_commit(src: Path, commit: str) -> str:
    if (src / "configure.ac").exists() and not (src / "HEAD").exists():
        head = run("git", "-C", str(src), "rev-parse", "HEAD", check=False).stdout.strip()
        return head or "work-tree"
    return run("git", f"--git-dir={src}", "rev-parse", commit).stdout.strip()


def built(prefix: Path, commit: str) -> bool:
    stamp = prefix / "fairshare-oracle-build"
    return stamp.exists() and stamp.read_text().strip() == commit


def build(src: Path, commit: str, prefix: Path, *, jobs: int) -> None:
    """OpenPBS of that commit, installed into `prefix`."""
    work = Path(tempfile.mkdtemp(prefix="openpbs-build-"))
    try:
        if (src / "configure.ac").exists() and not (src / "HEAD").exists():
            shutil.copytree(src, work / "src", ignore=shutil.ignore_patterns(".git"))
        else:
            (work / "src").mkdir()
            archive = subprocess.run(
                ["git", f"--git-dir={src}", "archive", commit], capture_output=True, check=True
            ).stdout
            subprocess.run(["tar", "-x", "-C", str(work / "src")], input=archive, check=True)
        tree = work / "src"
        for name in LOOPBACK_FILES:
            path = tree / name
            text = path.read_text()
            if text.count(LOOPBACK_LINE) != 1:
                raise OracleError(f"{name}: the loopback test to change is not there once")
            path.write_text(text.replace(LOOPBACK_LINE, "if (0 && " + LOOPBACK_LINE[4:]))
        log(f"building OpenPBS {commit[:12]} into {prefix} (about 10 minutes)")
        build_log = work / "build.log"
        steps = [
            ["./autogen.sh"],
            ["./configure", f"--prefix={prefix}"],
            ["make", f"-j{jobs}"],
            ["make", "install"],
        ]
        for step in steps:
            with open(build_log, "a") as out:
                done = subprocess.run(step, cwd=tree, stdout=out, stderr=subprocess.STDOUT,
                                      check=False)  # fmt: skip
            if done.returncode != 0:
                tail = "\n".join(build_log.read_text(errors="replace").splitlines()[-20:])
                raise OracleError(f"{' '.join(step)} failed:\n{tail}")
        for name in ("pbs_iff", "pbs_rcp"):  # setuid root, as PBS's packages install them
            (prefix / "sbin" / name).chmod(0o4755)
        (prefix / "fairshare-oracle-build").write_text(commit + "\n")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def packages_checked(install: bool) -> None:
    missing = [
        name for name in BUILD_PACKAGES
        if subprocess.run(["dpkg-query", "-W", "-f=${Status}", name], capture_output=True,
                          text=True, check=False).stdout.strip() != "install ok installed"
    ]  # fmt: skip
    if missing and install:
        apt_installed(missing)
        return packages_checked(False)
    if missing:
        raise OracleError(f"not installed: {' '.join(missing)} (or run with --install)")
    if os.geteuid() != 0:
        raise OracleError("run as root: PBS's daemons and qsub as other users need it")


# The running PBS


class Pbs:
    """One OpenPBS installation running with a PBS_HOME of its own."""

    def __init__(self, prefix: Path, folder: Path) -> None:
        self.prefix, self.folder = prefix, folder
        self.home = folder / "home"
        self.conf = folder / "pbs.conf"
        self.host = socket.gethostname()
        self.env = {
            **os.environ,
            "PBS_CONF_FILE": str(self.conf),
            "PATH": f"{prefix}/bin:{prefix}/sbin:{os.environ.get('PATH', '/usr/bin:/bin')}",
            "TZ": "UTC",
        }
        self.started = False

    def bin(self, name: str) -> str:
        for folder in ("bin", "sbin", "libexec"):
            path = self.prefix / folder / name
            if path.exists():
                return str(path)
        raise OracleError(f"{name} is not in {self.prefix}")

    def start(self) -> None:
        busy = [port for port in PORTS if _listening(port)]
        if busy:
            raise OracleError(f"ports {busy} are taken: another PBS runs here?")
        env = {**self.env, "PBS_HOME": str(self.home), "PBS_EXEC": str(self.prefix),
               "PBS_SERVER": self.host}  # fmt: skip
        run(self.bin("pbs_postinstall"), "server", env=env, limit=300)
        with open(self.conf, "a") as conf:
            conf.write("PBS_START_SERVER=1\nPBS_START_SCHED=1\nPBS_START_COMM=1\n"
                       "PBS_START_MOM=1\n")  # fmt: skip
        (self.home / "pbs_environment").write_text("PATH=/bin:/usr/bin\nTZ=UTC\n")
        self.started = True
        run(self.bin("pbs_init.d"), "start", env=self.env, limit=600)
        self.wait_for("the server", lambda: self.qstat_ok(), 120)
        self.wait_for("the MoM", lambda: "state = free" in self.command("pbsnodes", "-a"), 120)

    def start_sched(self) -> None:
        """pbs_sched again, as pbs_init.d starts it (it daemonizes)."""
        run(self.bin("pbs_sched"), env=self.env)
        self.wait_for("pbs_sched", lambda: bool(_processes_of((self.bin("pbs_sched"),))), 30)

    def qstat_ok(self) -> bool:
        return run(self.bin("qstat"), "-B", env=self.env, check=False).returncode == 0

    def stop(self) -> None:
        if self.started:
            with contextlib.suppress(OracleError, subprocess.SubprocessError):
                run(self.bin("pbs_init.d"), "stop", env=self.env, check=False, limit=300)
        # Whatever is left of this installation or this home, by PID.
        for _ in range(20):
            left = _processes_of((str(self.prefix), str(self.home)))
            if not left:
                return
            for pid in left:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGTERM if _ < 10 else signal.SIGKILL)
            time.sleep(1)
        raise OracleError(f"processes left running: {_processes_of((str(self.prefix),))}")

    def command(self, name: str, *args: str, check: bool = True) -> str:
        return run(self.bin(name), *args, env=self.env, check=check).stdout

    def qmgr(self, line: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return run(self.bin("qmgr"), "-c", line, env=self.env, check=check)

    def qsub(self, job: spec.Job) -> str:
        args = [self.bin("qsub"), "-S", "/bin/sh", "-o", "/dev/null", "-e", "/dev/null",
                "-q", job.queue]  # fmt: skip
        for resource in job.resources:
            args += ["-l", resource]
        if job.priority is not None:
            args += ["-p", str(job.priority)]
        if job.busy:  # a loop that keeps a core busy for that long
            loop = (
                f"end=$(( $(date +%s) + {job.seconds} ));"
                " while [ $(date +%s) -lt $end ]; do :; done"
            )
            args += ["--", "/bin/sh", "-c", loop]
        else:
            args += ["--", "/bin/sleep", str(job.seconds)]
        line = " ".join(_quoted(arg) for arg in args)
        done = run("su", "-s", "/bin/sh", job.user, "-c",
                   f"cd / && PBS_CONF_FILE={self.conf} TZ=UTC {line}", env=self.env)  # fmt: skip
        return done.stdout.strip()

    def wait_for(self, what: str, done: Callable[[], bool], seconds: float) -> None:
        until = time.monotonic() + seconds
        while time.monotonic() < until:
            if done():
                return
            time.sleep(0.5)
        raise OracleError(f"no {what} after {seconds:.0f} s")

    def schedlog(self) -> list[str]:
        folder = self.home / "sched_logs"
        return [line for path in sorted(folder.iterdir())
                for line in path.read_text(errors="replace").splitlines()]  # fmt: skip

    def jobs_cleared(self) -> None:
        ids = self.command("qselect").split()
        if ids:
            self.command("qdel", "-W", "force", *ids, check=False)
        self.wait_for("an empty queue", lambda: not self.command("qselect").split(), 60)


def _quoted(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def _listening(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def _processes_of(markers: Sequence[str]) -> list[int]:
    """Processes run from one of these folders (their program is in it), or whose arguments
    name one and whose program is PostgreSQL's (the datastore, `postgres -D PBS_HOME/...`)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            exe = os.readlink(entry / "exe")
        except OSError:
            continue
        program = argv[0].decode(errors="replace") if argv else ""
        line = b" ".join(argv).decode(errors="replace")
        for marker in markers:
            if (
                exe.startswith(marker)
                or program.startswith(marker)
                or ("postgres" in exe and marker in line)
            ):
                found.append(int(entry.name))
                break
    return found


# The cases


def cycle_lines(lines: Sequence[str], after: int) -> tuple[list[str], int]:
    """The lines of the first whole scheduling cycle that starts after line `after`."""
    start = end = None
    for index in range(after, len(lines)):
        message = lines[index].rsplit(";", 1)[-1]
        if message == "Starting Scheduling Cycle" and start is None:
            start = index
        elif message == "Leaving Scheduling Cycle" and start is not None:
            end = index
            break
    if start is None or end is None:
        raise OracleError("no whole scheduling cycle in the log")
    return list(lines[start : end + 1]), end + 1


def log_epoch(line: str) -> int:
    match = LOG_LINE.match(line)
    if not match:
        raise OracleError(f"not a PBS log line: {line!r}")
    moment = datetime.strptime(match.group(1), "%m/%d/%Y %H:%M:%S").replace(tzinfo=UTC)
    return int(moment.timestamp())


def priority_case(pbs: Pbs, case: spec.PriorityCase, out: Path) -> None:
    """Configure, queue the jobs on an offline node, make one cycle, capture it."""
    pbs.jobs_cleared()
    priv = pbs.home / "sched_priv"
    shipped = (pbs.prefix / "etc" / "pbs_sched_config").read_text()
    (priv / "sched_config").write_text(spec.sched_config(shipped, case.sched_config))
    (priv / "resource_group").write_text(spec.resource_group())
    for name in ("usage", "usage.bak", "usage.touch"):
        (priv / name).unlink(missing_ok=True)
    pbs.qmgr("set server scheduling = False")
    for queue, priority in spec.QUEUES:
        if queue != "workq":
            pbs.qmgr(f"create queue {queue} queue_type=execution,enabled=true,started=true",
                     check=False)  # fmt: skip
        pbs.qmgr(f"set queue {queue} Priority = {priority}")
    for key, value in {"eligible_time_enable": "False", **case.server}.items():
        pbs.qmgr(f"set server {key} = {value}")
    pbs.qmgr("unset sched job_sort_formula_threshold", check=False)
    for key, value in case.sched.items():
        pbs.qmgr(f"set sched {key} = {value}")
    refusals = []
    for formula in case.refused:
        done = pbs.qmgr(f'set server job_sort_formula = "{formula}"', check=False)
        refusals.append({"formula": formula, "status": done.returncode,
                         "said": (done.stderr + done.stdout).strip()})  # fmt: skip
    if case.formula is None:
        pbs.qmgr("unset server job_sort_formula", check=False)
        pbs.qmgr("unset sched job_sort_formula", check=False)
    else:
        pbs.qmgr(f'set server job_sort_formula = "{case.formula}"')
    _sched_restarted(pbs)
    for entity, usage in case.usage:
        pbs.command("pbsfs", "-s", entity, str(usage))
    ids = []
    for job in case.jobs:
        ids.append(pbs.qsub(job))
        time.sleep(job.after or 0.2)
    time.sleep(2)
    folder = _fresh(out / case.name)
    qmgr_text = pbs.command("qmgr", "-c", "print server") + pbs.command("qmgr", "-c", "print sched")
    (folder / "qmgr.txt").write_text(qmgr_text)
    (folder / "qstat.json").write_text(pbs.command("qstat", "-f", "-F", "json"))
    before = len(pbs.schedlog())
    pbs.qmgr("set server scheduling = True")  # one cycle (SCH_SCHEDULE_CMD)
    lines: list[str] = []

    def cycled() -> bool:
        nonlocal lines
        try:
            lines, _ = cycle_lines(pbs.schedlog(), before)
        except OracleError:
            return False
        return True

    pbs.wait_for("a scheduling cycle", cycled, 60)
    pbs.qmgr("set server scheduling = False")
    (folder / "sched_log").write_text("\n".join(lines) + "\n")
    shutil.copy(priv / "sched_config", folder / "sched_config")
    shutil.copy(priv / "resource_group", folder / "resource_group")
    (folder / "pbsfs.txt").write_text(pbs.command("pbsfs"))
    usage_steps = [
        {"command": "pbsfs", "args": ["-s", entity, str(usage)]} for entity, usage in case.usage
    ]
    document = {
        "kind": "priorities",
        "case": case.name,
        "about": case.about,
        "openpbs": pbs.command("qstat", "--version").strip(),
        "cycle_time": datetime.fromtimestamp(log_epoch(lines[0]), UTC).isoformat(),
        "jobs": ids,
        "inputs": [
            {"import": "import_resource_group", "file": "resource_group"},
            {"import": "import_sched_config", "file": "sched_config"},
            {"import": "import_qmgr", "file": "qmgr.txt"},
            *usage_steps,
            {"import": "import_qstat", "file": "qstat.json", "args": ["--timezone", "UTC"]},
        ],
        "refused": refusals,
    }
    (folder / "case.json").write_text(json.dumps(document, indent=2) + "\n")
    log(f"{case.name}: {len(ids)} jobs, cycle at {document['cycle_time']}")


def usage_case(pbs: Pbs, case: spec.UsageCase, out: Path) -> None:
    """A clean fairshare database, the MoM's polls, a 60 s iteration; real jobs that end by
    themselves; two more cycles; then what PBS recorded, and what the server saw meanwhile."""
    pbs.jobs_cleared()
    pbs.qmgr("set server scheduling = False")
    _sched_stopped(pbs)
    priv = pbs.home / "sched_priv"
    shipped = (pbs.prefix / "etc" / "pbs_sched_config").read_text()
    changes = {
        "unknown_shares": "10",  # mail's and backup's jobs run too, charged under unknown
        "fairshare_usage_res": case.usage_res,
        "fairshare_decay_time": case.decay_time,
        "fairshare_decay_factor": case.decay_factor,
    }
    (priv / "sched_config").write_text(spec.sched_config(shipped, changes))
    (priv / "resource_group").write_text(spec.resource_group())
    for name in ("usage", "usage.bak", "usage.touch"):
        (priv / name).unlink(missing_ok=True)
    pbs.qmgr("unset server job_sort_formula", check=False)
    pbs.qmgr("unset sched job_sort_formula", check=False)
    pbs.qmgr("set server eligible_time_enable = False")
    pbs.qmgr(f"set server scheduler_iteration = {case.iteration}")
    config = pbs.home / "mom_priv" / "config"
    kept = [line for line in config.read_text().splitlines()
            if not line.startswith(("$min_check_poll", "$max_check_poll"))]  # fmt: skip
    kept += [f"$min_check_poll {case.min_check_poll}", f"$max_check_poll {case.max_check_poll}"]
    config.write_text("\n".join(kept) + "\n")
    for pid in _processes_of((str(pbs.prefix / "sbin" / "pbs_mom"),)):
        os.kill(pid, signal.SIGHUP)  # pbs_mom reads its config again
    pbs.qmgr(f"set node {pbs.host} resources_available.ncpus = 8")
    pbs.command("pbsnodes", "-r", pbs.host)
    accounting = pbs.home / "server_priv" / "accounting"
    accounting_from = _sizes(accounting)
    log_from = len(pbs.schedlog())
    started = time.time()
    pbs.start_sched()
    pbs.qmgr("set server scheduling = True")
    probe = Probe(pbs)
    probe.start()
    ids = []
    try:
        for job in case.jobs:
            ids.append(pbs.qsub(job))
            time.sleep(job.after)
        pbs.wait_for("every job to end", lambda: not pbs.command("qselect").split(), 900)
        ended = time.time()

        def two_more_cycles() -> bool:
            lines = pbs.schedlog()[log_from:]
            starts = [
                log_epoch(line) for line in lines if line.endswith(";Starting Scheduling Cycle")
            ]
            return sum(1 for moment in starts if moment > ended + 1) >= 2

        pbs.wait_for("two more cycles", two_more_cycles, 3 * case.iteration + 60)
    finally:
        probe.stop()
    pbs.qmgr(f"set node {pbs.host} resources_available.ncpus = 2")
    pbs.command("pbsnodes", "-o", pbs.host)
    folder = _fresh(out / case.name)
    (folder / "accounting").write_text(_appended(accounting, accounting_from))
    (folder / "sched_log").write_text("\n".join(pbs.schedlog()[log_from:]) + "\n")
    shutil.copy(config, folder / "mom_config")
    shutil.copy(priv / "sched_config", folder / "sched_config")
    shutil.copy(priv / "resource_group", folder / "resource_group")
    qmgr_text = pbs.command("qmgr", "-c", "print server") + pbs.command("qmgr", "-c", "print sched")
    (folder / "qmgr.txt").write_text(qmgr_text)
    (folder / "pbsfs.txt").write_text(pbs.command("pbsfs"))
    shutil.copy(priv / "usage", folder / "usage")
    (folder / "probe.json").write_text(json.dumps(probe.seen, indent=1) + "\n")
    if case.snapshots:  # the usage file after each cycle that wrote it: usage_after/EPOCH
        (folder / "usage_after").mkdir()
        for moment, data in probe.usages:
            (folder / "usage_after" / str(int(moment))).write_bytes(data)
    document = {
        "kind": "usage",
        "case": case.name,
        "about": case.about,
        "openpbs": pbs.command("qstat", "--version").strip(),
        "scheduler_started": datetime.fromtimestamp(int(started), UTC).isoformat(),
        "jobs": ids,
        "inputs": [
            {"import": "import_resource_group", "file": "resource_group"},
            {"import": "import_sched_config", "file": "sched_config"},
            {"import": "import_qmgr", "file": "qmgr.txt"},
            {"import": "import_mom_config", "file": "mom_config"},
            {"import": "ingest_pbs_accounting", "file": "accounting"},
            {"import": "import_sched_log", "file": "sched_log", "args": ["--timezone", "UTC"]},
        ],
    }
    (folder / "case.json").write_text(json.dumps(document, indent=2) + "\n")
    log(f"{case.name}: {len(ids)} jobs, {len(probe.seen)} samples seen by the server")


class Probe:
    """What the server says of each running job's resources_used, every half second: when
    each MoM sample reached it (a diagnostic beside the capture, not an input); and each
    version of the scheduler's usage file, as it wrote it after a cycle."""

    def __init__(self, pbs: Pbs) -> None:
        self.pbs = pbs
        self.seen: list[dict[str, object]] = []
        self.last: dict[str, tuple[str, str]] = {}
        self.usage_path = pbs.home / "sched_priv" / "usage"
        self.usages: list[tuple[float, bytes]] = []
        self._stop = False
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop = True
        if self._thread is not None:
            self._thread.join(10)
        self._usage_seen()  # what the last cycle wrote

    def _usage_seen(self) -> None:
        with contextlib.suppress(OSError):
            data = self.usage_path.read_bytes()
            if data and (not self.usages or self.usages[-1][1] != data):
                self.usages.append((time.time(), data))

    def _run(self) -> None:
        while not self._stop:
            moment = time.time()
            self._usage_seen()
            done = run(self.pbs.bin("qstat"), "-f", "-F", "json", env=self.pbs.env, check=False)
            with contextlib.suppress(ValueError):
                jobs = json.loads(done.stdout or "{}").get("Jobs", {})
                for job_id, job in jobs.items():
                    used = job.get("resources_used", {})
                    now = (str(used.get("walltime", "")), str(used.get("cput", "")))
                    if job.get("job_state") == "R" and self.last.get(job_id) != now:
                        self.last[job_id] = now
                        self.seen.append({"at": round(moment, 2), "job": job_id,
                                          "walltime": now[0], "cput": now[1]})  # fmt: skip
            time.sleep(max(0.0, 0.5 - (time.time() - moment)))


def _sizes(folder: Path) -> dict[str, int]:
    return {path.name: path.stat().st_size for path in folder.iterdir()} if folder.exists() else {}


def _appended(folder: Path, before: dict[str, int]) -> str:
    """What the files of the folder gained since `before` (their sizes then)."""
    parts = []
    for path in sorted(folder.iterdir()):
        with open(path, errors="replace") as stream:
            stream.seek(before.get(path.name, 0))
            parts.append(stream.read())
    return "".join(parts)


def _sched_stopped(pbs: Pbs) -> None:
    for pid in _processes_of((str(pbs.prefix / "sbin" / "pbs_sched"),)):
        os.kill(pid, signal.SIGTERM)
    sched = str(pbs.prefix / "sbin" / "pbs_sched")
    pbs.wait_for("pbs_sched to stop", lambda: not _processes_of((sched,)), 30)


def _sched_restarted(pbs: Pbs) -> None:
    """pbs_sched reads sched_config and resource_group again (SIGHUP)."""
    pids = [pid for pid in _processes_of((str(pbs.prefix / "sbin" / "pbs_sched"),))]
    for pid in pids:
        os.kill(pid, signal.SIGHUP)
    time.sleep(2)


def _fresh(folder: Path) -> Path:
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    return folder


@contextlib.contextmanager
def pbs_running(prefix: Path, keep: bool) -> Iterator[Pbs]:
    HOMES.mkdir(parents=True, exist_ok=True)
    HOMES.chmod(0o755)
    folder = Path(tempfile.mkdtemp(prefix="run-", dir=HOMES))
    folder.chmod(0o755)
    pbs = Pbs(prefix, folder)
    try:
        pbs.start()
        pbs.qmgr("set sched log_events = 2047")  # each job's formula evaluation (DEBUG2)
        pbs.command("pbsnodes", "-o", pbs.host)  # queued jobs stay queued
        yield pbs
    finally:
        pbs.stop()
        folder_left(folder, keep)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--src", type=Path, default=os.environ.get("OPENPBS_SRC"),
                        help="an OpenPBS source checkout (default OPENPBS_SRC)")  # fmt: skip
    parser.add_argument("--commit", default="HEAD", help="the commit of a git directory")
    parser.add_argument("--prefix", type=Path, default=PREFIX, help=f"where to install ({PREFIX})")
    parser.add_argument("--out", type=Path, default=OUT, help=f"where the cases go ({OUT})")
    parser.add_argument("--case", action="append", dest="cases", metavar="NAME")
    parser.add_argument("--keep", action="store_true", help="keep PBS_HOME and its logs")
    parser.add_argument("--install", action="store_true", help="apt-get the build packages")
    args = parser.parse_args(argv)
    known: dict[str, spec.PriorityCase | spec.UsageCase] = {
        case.name: case for case in (*spec.PRIORITY_CASES, *spec.USAGE_CASES)
    }
    unknown = sorted(set(args.cases or ()) - set(known))
    if unknown:
        parser.error(f"unknown case(s) {', '.join(unknown)}; known: {', '.join(known)}")
    cases = [known[name] for name in args.cases] if args.cases else list(known.values())

    def work() -> str:
        packages_checked(args.install)
        if args.src is None and not (args.prefix / "fairshare-oracle-build").exists():
            raise OracleError("give --src (or OPENPBS_SRC): an OpenPBS source checkout")
        if args.src is not None:
            commit = source_commit(args.src, args.commit)
            if not built(args.prefix, commit):
                build(args.src, commit, args.prefix, jobs=os.cpu_count() or 2)
        with pbs_running(args.prefix, args.keep) as pbs:
            for case in cases:
                if isinstance(case, spec.PriorityCase):
                    priority_case(pbs, case, args.out)
                else:
                    usage_case(pbs, case, args.out)
        return f"{len(cases)} cases captured into {args.out}"

    return guarded("pbs-oracle", TIME_LIMIT, work)


if __name__ == "__main__":
    sys.exit(main())
