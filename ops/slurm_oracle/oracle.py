"""`make slurm-oracle`: a real Slurm 22.05 on this machine, and what it prints, as test cases.

It brings up a single-host cluster from Debian's packages (munge, slurmdbd on the machine's
MariaDB, slurmctld and four slurmd, each on ports of its own, its own munge socket and key,
everything under one temporary folder), builds the association tree of site.py with sacctmgr,
runs short real jobs for usage, drains the nodes and submits the pending jobs of site.py. Then,
for each priority configuration of site.py, it rewrites slurm.conf, restarts slurmctld (the
jobs and the usage are kept in its state), waits for a priority pass, and captures inside that
one calculation window every input our imports read and every output our commands imitate:
`sacctmgr dump`, `sshare -a -l -P` (the input), `scontrol show config`, `scontrol show
partition`, `sacctmgr show qos -P`, slurm.conf, `squeue --json`, the pass's time
(slurmctld's `priority_last_decay_ran`), and `sprio` and `sshare` with their options. A capture
whose window a pass crossed is taken again.

Each case is a folder of tests/captures/slurm/ with case.json (the pass time, the inputs in
the order a site imports them, each output with its command line); tests/accounting/commands/
test_slurm_oracle.py replays them. Everything started is stopped by its PID whatever happens
(the jobs cancelled first), the accounting database dropped and the folder removed (`--keep`
keeps the folder and the database). It needs root (SlurmUser=root; jobs run as the system
accounts of base-passwd, which every Debian has) and the packages slurm-wlm, slurmdbd, munge
(`--install` installs them with apt-get).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import site_spec as spec
from oracle_kit import OracleError, apt_installed, folder_left, guarded, log

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "tests" / "captures" / "slurm"
PACKAGES = ("slurm-wlm", "slurmdbd", "munge", "slurm-client")
PROGRAMS = ("munged", "slurmdbd", "slurmctld", "slurmd", "sacctmgr", "sbatch", "scontrol",
            "squeue", "sprio", "sshare", "scancel")  # fmt: skip
MYSQL = ("mysql", "-h", "127.0.0.1", "-P", "3306", "-u", "root")
TIME_LIMIT = 1800  # seconds for the whole run
COMMAND_LIMIT = 60  # seconds for one client command


def free_ports(count: int) -> list[int]:
    """Ports nobody listens on now, on the loopback, all different."""
    sockets: list[socket.socket] = []
    ports: list[int] = []
    try:
        while len(ports) < count:
            sock = socket.socket()
            sock.bind(("127.0.0.1", 0))
            sockets.append(sock)
            port = sock.getsockname()[1]
            if port < 60000:  # clear of the ephemeral range clients connect from
                ports.append(port)
    finally:
        for sock in sockets:
            sock.close()
    return ports


class Cluster:
    """The running cluster: its folder, its daemons, and the client commands pointed at it."""

    def __init__(self, folder: Path, *, keep: bool = False) -> None:
        self.folder = folder
        self.keep = keep
        self.database = f"slurm_oracle_{os.getpid()}"
        self.processes: dict[str, subprocess.Popen[bytes]] = {}
        (
            self.ctld_port,
            self.dbd_port,
            self.slurmd_port,
            *self.node_ports,
        ) = free_ports(3 + len(spec.NODES))
        self.socket = folder / "munge" / "munge.socket"
        self.env = {**os.environ, "SLURM_CONF": str(folder / "etc" / "slurm.conf")}
        for name in ("SLURM_TIME_FORMAT", "SQUEUE_FORMAT", "SPRIO_FORMAT", "SLURM_CLUSTERS"):
            self.env.pop(name, None)
        self.env["TZ"] = "UTC"

    # The daemons

    def start(self, name: str, command: list[str]) -> None:
        log = open(self.folder / "log" / f"{name}.out", "ab")  # noqa: SIM115 (the child keeps it)
        self.processes[name] = subprocess.Popen(
            command, env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
            cwd=self.folder,
        )  # fmt: skip
        log.close()

    def stop(self, name: str, grace: float = 20) -> None:
        process = self.processes.pop(name, None)
        if process is None or process.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(signal.SIGTERM)
        try:
            process.wait(grace)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)

    def alive(self, name: str) -> bool:
        process = self.processes.get(name)
        return process is not None and process.poll() is None

    def stop_all(self) -> None:
        """Jobs cancelled (no slurmstepd outlives the run), then the daemons, newest first."""
        if self.alive("slurmctld"):
            with contextlib.suppress(OracleError, subprocess.TimeoutExpired):
                self.run("scancel", "--full", "--quiet", "-u", "ALL", check=False)
                self.run("scancel", "--quiet", "--state=PENDING", check=False)
                self.wait_for("the jobs to leave", self.no_running_jobs, 30)
        for name in reversed(list(self.processes)):
            self.stop(name)
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            subprocess.run(
                [*MYSQL, "-e", f"DROP DATABASE IF EXISTS {self.database}"],
                timeout=30, capture_output=True, check=False,
            )  # fmt: skip

    def run(self, *command: str, check: bool = True, input_text: str | None = None) -> str:
        """A client command's stdout; OracleError with its stderr when it fails."""
        done = subprocess.run(
            command, env=self.env, capture_output=True, timeout=COMMAND_LIMIT, check=False,
            input=None if input_text is None else input_text.encode(), cwd=self.folder,
        )  # fmt: skip
        if check and done.returncode != 0:
            raise OracleError(
                f"{' '.join(command)} exited {done.returncode}: {done.stderr.decode().strip()}"
            )
        return done.stdout.decode()

    def capture(self, *command: str) -> tuple[bytes, int]:
        """A command's stdout as bytes, and its exit status (sprio -j of no job exits 1)."""
        done = subprocess.run(
            command, env=self.env, capture_output=True, timeout=COMMAND_LIMIT, check=False,
            cwd=self.folder,
        )  # fmt: skip
        return done.stdout, done.returncode

    def wait_for(self, what: str, done: Callable[[], bool], seconds: float) -> None:
        until = time.monotonic() + seconds
        while time.monotonic() < until:
            if done():
                return
            for name in list(self.processes):
                if not self.alive(name):
                    raise OracleError(f"{name} stopped while waiting for {what}: {self.tail(name)}")
            time.sleep(0.5)
        raise OracleError(f"no {what} after {seconds:.0f} s")

    def tail(self, name: str, lines: int = 15) -> str:
        logs = [self.folder / "log" / f"{name}.log", self.folder / "log" / f"{name}.out"]
        text = "\n".join(p.read_text(errors="replace") for p in logs if p.exists())
        return "\n".join(text.splitlines()[-lines:])

    def munge_started(self) -> None:
        munge = self.folder / "munge"
        munge.mkdir(mode=0o755)
        key = munge / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o400)
        self.start("munged", [
            "munged", "--foreground", "--force", f"--socket={self.socket}",
            f"--key-file={key}", f"--pid-file={munge / 'munged.pid'}",
            f"--log-file={self.folder / 'log' / 'munged.log'}",
            f"--seed-file={munge / 'munged.seed'}",
        ])  # fmt: skip
        self.wait_for("munge socket", self.socket.exists, 20)

    def dbd_started(self) -> None:
        conf = self.folder / "etc" / "slurmdbd.conf"
        conf.write_text(
            spec.slurmdbd_conf(
                folder=self.folder, socket=self.socket, port=self.dbd_port, database=self.database
            )
        )
        conf.chmod(0o600)
        self.start("slurmdbd", ["slurmdbd", "-D"])

        def answers() -> bool:
            return (
                subprocess.run(
                    ["sacctmgr", "-n", "-P", "show", "cluster"], env=self.env,
                    capture_output=True, timeout=COMMAND_LIMIT, check=False,
                ).returncode == 0
            )  # fmt: skip

        self.wait_for("slurmdbd", answers, 60)

    def write_conf(self, case: spec.Case | None) -> None:
        text = spec.slurm_conf(
            folder=self.folder,
            socket=self.socket,
            ctld_port=self.ctld_port,
            slurmd_port=self.slurmd_port,
            dbd_port=self.dbd_port,
            node_ports=self.node_ports,
            case=case,
        )
        (self.folder / "etc" / "slurm.conf").write_text(text)
        (self.folder / "etc" / "gres.conf").write_text(spec.gres_conf(self.folder))

    def ctld_started(self, *, clean: bool = False) -> None:
        self.start("slurmctld", ["slurmctld", "-D", *(["-c"] if clean else [])])

        def up() -> bool:
            out = subprocess.run(
                ["scontrol", "ping"], env=self.env, capture_output=True, timeout=COMMAND_LIMIT,
                check=False,
            ).stdout.decode()  # fmt: skip
            return "is UP" in out

        self.wait_for("slurmctld", up, 60)

    def nodes_started(self) -> None:
        dev = self.folder / "dev"
        dev.mkdir()
        for node in spec.NODES:
            for index in range(node.gpus):  # gres/gpu needs device files: /dev/null's numbers
                os.mknod(dev / f"{node.name}-gpu{index}", 0o666 | 0o020000, os.makedev(1, 3))
            (self.folder / "spool" / node.name).mkdir(mode=0o755)
            self.start(f"slurmd-{node.name}", ["slurmd", "-D", "-N", node.name])
        self.wait_for("idle nodes", lambda: self.node_states() == {"idle"}, 90)

    def node_states(self) -> set[str]:
        out = self.run("sinfo", "-h", "-N", "-o", "%T", check=False)
        return {line.strip().rstrip("*~#") for line in out.splitlines() if line.strip()}

    def no_running_jobs(self) -> bool:
        return not self.run("squeue", "-h", "-t", "R,CG,CF,S", "-o", "%i", check=False).strip()

    def last_pass(self) -> int:
        """slurmctld's priority_last_decay_ran: two pack_time values, the last pass first."""
        path = self.folder / "state" / "priority_last_decay_ran"
        if not path.exists():
            return 0
        data = path.read_bytes()
        return struct.unpack(">q", data[:8])[0] if len(data) >= 8 else 0

    def pass_after(self, moment: int, seconds: float = 150) -> int:
        """Wait for a priority pass that began after `moment`; its time."""
        self.wait_for(f"a priority pass after {moment}", lambda: self.last_pass() > moment, seconds)
        time.sleep(1)  # the pass writes its time when done; let its log settle
        return self.last_pass()


def tree_built(cluster: Cluster) -> None:
    """The accounts, users, QOS and their priorities of site.py, through sacctmgr."""
    sacctmgr = ("sacctmgr", "-i")
    cluster.run(*sacctmgr, "add", "cluster", spec.CLUSTER)
    for qos in spec.QOS:
        if qos.name == "normal":
            cluster.run(*sacctmgr, "modify", "qos", "normal", "set", f"priority={qos.priority}")
        else:
            cluster.run(*sacctmgr, "add", "qos", qos.name, f"priority={qos.priority}")
    qos_names = ",".join(q.name for q in spec.QOS)
    for account in spec.ACCOUNTS:
        options = [f"parent={account.parent}", f"fairshare={account.shares}"]
        if account.priority is not None:
            options.append(f"priority={account.priority}")
        cluster.run(*sacctmgr, "add", "account", account.name, *options,
                    f"qos={qos_names}")  # fmt: skip
    for user in spec.USERS:
        options = [f"account={user.account}", f"fairshare={user.shares}", f"qos={qos_names}"]
        if user.priority is not None:
            options.append(f"priority={user.priority}")
        cluster.run(*sacctmgr, "add", "user", user.name, *options)
    for coordinator in spec.COORDINATORS:
        cluster.run(*sacctmgr, "add", "coordinator", f"account={coordinator.account}",
                    f"names={coordinator.user}")  # fmt: skip


def sbatch(cluster: Cluster, job: spec.Job, dependency: dict[str, str]) -> str:
    """Submit one job as its user; its id (`123`, an array's `124`)."""
    args = ["sbatch", "--parsable", f"--uid={job.user}", f"--gid={job.user}",
            f"--account={job.account}", f"--chdir={cluster.folder / 'work'}",
            "--output=/dev/null", f"--job-name={job.name}", *job.options]  # fmt: skip
    if job.after:
        args.append(f"--dependency=afterok:{dependency[job.after]}")
    args += ["--wrap", f"sleep {job.seconds}"]
    job_id = cluster.run(*args).strip().split(";")[0]
    dependency[job.name] = job_id
    return job_id


def usage_run(cluster: Cluster) -> None:
    """The usage jobs of site.py, all at once, to their end; then a pass so that sshare's
    normalised columns include them."""
    names: dict[str, str] = {}
    for job in spec.USAGE_JOBS:
        sbatch(cluster, job, names)
    cluster.wait_for("the usage jobs to start and end",
                     lambda: cluster.no_running_jobs() and not cluster.run(
                         "squeue", "-h", "-o", "%i").strip(), 180)  # fmt: skip
    ended = int(time.time())
    log(f"usage jobs done: {', '.join(sorted(names.values(), key=int))}")
    cluster.pass_after(ended)


def pending_submitted(cluster: Cluster) -> dict[str, str]:
    """The pending jobs of site.py on drained nodes, and their admin updates."""
    cluster.run("scontrol", "update", f"nodename={spec.node_list()}", "state=drain",
                "reason=oracle: jobs stay pending")  # fmt: skip
    names: dict[str, str] = {}
    for job in spec.PENDING_JOBS:
        job_id = sbatch(cluster, job, names)
        for update in job.updates:
            cluster.run("scontrol", "update", f"jobid={job_id}", update)
        time.sleep(job.pause)
    log(f"pending jobs: {', '.join(f'{n}={i}' for n, i in names.items())}")
    return names


def _write(path: Path, data: bytes) -> None:
    path.write_bytes(data)


def case_captured(cluster: Cluster, case: spec.Case, jobs: dict[str, str], out: Path) -> None:
    """Restart slurmctld on the case's slurm.conf, wait for its pass, capture the window."""
    cluster.stop("slurmctld")
    cluster.write_conf(case)
    restarted = int(time.time())
    cluster.ctld_started()
    # A pass runs at start-up; then one sshare -a (it computes every user's NormUsage, which a
    # restart leaves at NO_VAL and which the next pass's DEPTH_OBLIVIOUS sums read), and the
    # capture waits for the pass after it: the steady state a running cluster is in.
    started = cluster.pass_after(restarted - 1)
    cluster.run("sshare", "-a", "-l")
    for attempt in range(4):
        moment = cluster.pass_after(started if attempt == 0 else cluster.last_pass())
        folder = out / case.name
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        document = window_captured(cluster, case, jobs, folder, moment)
        if cluster.last_pass() == moment:
            (folder / "case.json").write_text(json.dumps(document, indent=2) + "\n")
            log(f"{case.name}: {len(spec.outputs(case, jobs))} outputs at pass {moment}")
            return
        log(f"{case.name}: a pass crossed the capture; again")
    raise OracleError(f"{case.name}: every capture was crossed by a pass")


def window_captured(
    cluster: Cluster, case: spec.Case, jobs: dict[str, str], folder: Path, moment: int
) -> dict[str, object]:
    inputs: list[dict[str, object]] = []

    def keep(name: str, data: bytes, command: str, *args: str) -> None:
        _write(folder / name, data)
        inputs.append({"file": name, "import": command, "args": list(args)})

    dump = folder / "sacctmgr_dump.cfg"
    cluster.run("sacctmgr", "-i", "dump", spec.CLUSTER, f"file={dump}")
    inputs.append({"file": dump.name, "import": "import_sacctmgr_dump", "args": []})
    keep("sshare_a_l_P.txt", cluster.capture("sshare", "-a", "-l", "-P")[0], "import_sshare")
    config_files = [
        ("slurm.conf", (cluster.folder / "etc" / "slurm.conf").read_bytes()),
        ("scontrol_show_config.txt", cluster.capture("scontrol", "show", "config")[0]),
        ("scontrol_show_partition.txt", cluster.capture("scontrol", "show", "partition")[0]),
        ("sacctmgr_show_qos.txt", cluster.capture("sacctmgr", "show", "qos", "-P")[0]),
    ]
    for name, data in config_files:
        _write(folder / name, data)
    inputs.append({"file": [name for name, _ in config_files], "import": "import_slurm_config",
                   "args": []})  # fmt: skip
    keep("squeue.json", cluster.capture("squeue", "--json")[0], "import_squeue")
    # Not an input: the associations' numbers as slurmctld holds them, unrounded, for whoever
    # reads a difference.
    _write(folder / "scontrol_show_assoc_mgr.txt",
           cluster.capture("scontrol", "show", "assoc_mgr", "flags=assoc")[0])  # fmt: skip
    outputs = []
    for name, command in spec.outputs(case, jobs):
        data, status = cluster.capture(*command)
        _write(folder / name, data)
        outputs.append({"file": name, "command": command[0], "args": list(command[1:]),
                        "status": status})  # fmt: skip
    return {
        "slurm": cluster.run("sinfo", "--version").strip(),
        "case": case.name,
        "about": case.about,
        "pass_time": moment,
        "now": datetime.fromtimestamp(moment, UTC).isoformat().replace("+00:00", "Z"),
        "inputs": inputs,
        "outputs": outputs,
    }


def packages_checked(install: bool) -> None:
    missing = [name for name in PROGRAMS if shutil.which(name) is None]
    if missing and install:
        apt_installed(PACKAGES)
        missing = [name for name in PROGRAMS if shutil.which(name) is None]
    if missing:
        raise OracleError(f"not installed: {', '.join(missing)} (apt-get install "
                          f"{' '.join(PACKAGES)}, or run with --install)")  # fmt: skip
    if os.geteuid() != 0:
        raise OracleError("run as root: the daemons run as SlurmUser=root and jobs as others")
    version = subprocess.run(["slurmctld", "-V"], capture_output=True, check=False).stdout
    if " 22.05." not in f" {version.decode()}":
        raise OracleError(f"this is {version.decode().strip()}: the captures are of 22.05")
    done = subprocess.run([*MYSQL, "-e", "SELECT 1"], capture_output=True, check=False)
    if done.returncode != 0:
        raise OracleError(f"MariaDB at 127.0.0.1:3306 (root, no password): {done.stderr!r}")


@contextlib.contextmanager
def cluster_running(keep: bool) -> Iterator[Cluster]:
    folder = Path(tempfile.mkdtemp(prefix="slurm-oracle-"))
    folder.chmod(0o755)  # the jobs' users read their scripts in the spool, write in work/
    for name in ("etc", "log", "state", "spool", "work"):
        (folder / name).mkdir(mode=0o755)
    (folder / "work").chmod(0o1777)
    cluster = Cluster(folder, keep=keep)
    try:
        yield cluster
    finally:
        cluster.stop_all()
        folder_left(folder, keep)


def oracle(cases: Sequence[spec.Case], out: Path, *, keep: bool) -> None:
    with cluster_running(keep) as cluster:
        log(f"ports: slurmctld {cluster.ctld_port}, slurmdbd {cluster.dbd_port}, slurmd "
             f"{', '.join(map(str, cluster.node_ports))}; folder {cluster.folder}")  # fmt: skip
        cluster.write_conf(None)
        cluster.munge_started()
        cluster.dbd_started()
        tree_built(cluster)
        cluster.ctld_started(clean=True)
        cluster.nodes_started()
        log("cluster up: " + cluster.run("sinfo", "-h", "-o", "%P %D %T").replace("\n", "; "))
        usage_run(cluster)
        jobs = pending_submitted(cluster)
        for case in cases:
            case_captured(cluster, case, jobs, out)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=OUT, help=f"where the cases go ({OUT})")
    parser.add_argument("--case", action="append", dest="cases", metavar="NAME",
                        help="only these cases (again for more)")  # fmt: skip
    parser.add_argument("--keep", action="store_true", help="keep the folder and its logs")
    parser.add_argument("--install", action="store_true", help="apt-get the packages if missing")
    args = parser.parse_args(argv)
    known = {case.name: case for case in spec.CASES}
    unknown = sorted(set(args.cases or ()) - set(known))
    if unknown:
        parser.error(f"unknown case(s) {', '.join(unknown)}; known: {', '.join(known)}")
    cases = [known[name] for name in args.cases] if args.cases else list(spec.CASES)

    def work() -> str:
        packages_checked(args.install)
        oracle(cases, args.out, keep=args.keep)
        return f"{len(cases)} cases captured into {args.out}"

    return guarded("slurm-oracle", TIME_LIMIT, work)


if __name__ == "__main__":
    sys.exit(main())
