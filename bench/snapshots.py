"""Queue snapshots of big sites (issue 39 item 7): `import_squeue` of a 60 MB and a 300 MB
`squeue --json` (20,000 and 100,000 jobs), `import_qstat` of a `qstat -f -F json` as big.

Run with `make bench` or `python bench/snapshots.py`; each import runs as `manage.py` under
`/usr/bin/time -v` on a fresh SQLite database, so its peak resident size is its own. Prints the
jobs read and stored, the seconds and the peak; asserts nothing. SNAPSHOT_MB lists the sizes
(default `60,300`).

The jobs are shaped as Slurm 24.11 (data_parser v0.0.42) and PBS Professional 2022 write them,
about 3 KB each: squeue --json indented, `meta` and `last_update` after the jobs; qstat with a
Variable_List. Three in four are pending, one in four running.

On this machine (2 cores), peak resident size and time of the whole import (SQLite), with
json.loads of the whole document / with the 32 MiB bound that refused it / streamed
(json_stream): squeue --json of 63 MB (20,653 jobs) 663 MiB 3.3 s / 178 MiB, refused / 102 MiB
7.6 s; of 315 MB (103,184 jobs) 3,195 MiB 17.5 s / refused / 121 MiB 36.1 s; qstat -f -F json
of 63 MB (32,291 jobs) 421 MiB 3.2 s / refused / 136 MiB 5.6 s; of 315 MB (161,070 jobs)
1,985 MiB 16.9 s / refused / 137 MiB 24.1 s. Streaming costs time (every event passes through
Python, twice) for memory that no longer grows with the queue.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SIZES = [int(size) for size in os.environ.get("SNAPSHOT_MB", "60,300").split(",")]
SUBMIT = 1_790_000_000


def no_val(number: int, *, unset: bool = False) -> dict[str, Any]:
    return {"set": not unset, "infinite": False, "number": 0 if unset else number}


def squeue_job(number: int) -> dict[str, Any]:
    running = number % 4 == 0
    job: dict[str, Any] = {
        "account": f"proj{number % 300}",
        "accrue_time": no_val(SUBMIT + number),
        "admin_comment": "",
        "array_job_id": no_val(0),
        "array_task_id": no_val(0, unset=True),
        "array_max_tasks": no_val(0),
        "array_task_string": "",
        "batch_features": "",
        "batch_flag": True,
        "batch_host": f"n{number % 900:04d}" if running else "",
        "flags": ["EXACT_TASK_COUNT_REQUESTED", "USING_DEFAULT_QOS", "PARTITION_ASSIGNED"],
        "cluster": "hpc",
        "command": f"/home/user{number % 2000}/runs/{number}/job.sh",
        "comment": "",
        "cpus": no_val(4 + number % 60),
        "cpus_per_task": no_val(1),
        "current_working_directory": f"/home/user{number % 2000}/runs/{number}",
        "deadline": no_val(0),
        "dependency": "",
        "derived_exit_code": {"status": ["SUCCESS"], "return_code": no_val(0)},
        "eligible_time": no_val(SUBMIT + number),
        "end_time": no_val(SUBMIT + number + 86_400 if running else 0),
        "exit_code": {"status": ["SUCCESS"], "return_code": no_val(0)},
        "features": "",
        "group_id": 1000 + number % 300,
        "group_name": f"proj{number % 300}",
        "hold": False,
        "job_id": 4_000_000 + number,
        "job_resources": {},
        "job_state": ["RUNNING"] if running else ["PENDING"],
        "last_sched_evaluation": no_val(SUBMIT + 600),
        "licenses": "",
        "mail_type": [],
        "mail_user": f"user{number % 2000}",
        "mcs_label": "",
        "memory_per_node": no_val(16_384),
        "name": f"relax-{number}",
        "nice": 0,
        "node_count": no_val(1 + number % 4),
        "nodes": f"n[{number % 900:04d}-{number % 900 + 3:04d}]" if running else "",
        "partition": "cpu,cpu_long",
        "priority": no_val(1000 + number % 5000),
        "qos": "normal",
        "reboot": False,
        "required_nodes": "",
        "restart_cnt": 0,
        "shared": [],
        "sockets_per_node": no_val(0, unset=True),
        "standard_error": f"/home/user{number % 2000}/runs/{number}/slurm-%j.err",
        "standard_input": "/dev/null",
        "standard_output": f"/home/user{number % 2000}/runs/{number}/slurm-%j.out",
        "start_time": no_val(SUBMIT + number + 600 if running else 0),
        "state_reason": "None" if running else "Priority",
        "submit_time": no_val(SUBMIT + number),
        "tasks": no_val(4),
        "threads_per_core": no_val(0, unset=True),
        "time_limit": no_val(1440),
        "tres_req_str": "cpu=4,mem=16G,node=1,billing=4",
        "tres_alloc_str": "cpu=4,mem=16G,node=1,billing=4" if running else "",
        "user_id": 20_000 + number % 2000,
        "user_name": f"user{number % 2000}",
    }
    return job


def squeue_lines(size: int) -> Iterator[str]:
    yield '{\n  "jobs": [\n'
    written = number = 0
    while written < size:
        text = ("," if number else "") + json.dumps(squeue_job(number), indent=2) + "\n"
        written += len(text)
        number += 1
        yield text
    envelope = {
        "last_backfill": no_val(SUBMIT + 500),
        "last_update": no_val(SUBMIT + 900),
        "meta": {
            "plugin": {"type": "openapi/slurmctld", "data_parser": "data_parser/v0.0.42"},
            "slurm": {
                "version": {"major": "24", "micro": "5", "minor": "11"},
                "release": "24.11.5",
            },
        },
        "errors": [],
        "warnings": [],
    }
    yield "  ],\n" + json.dumps(envelope, indent=2)[1:] + "\n"


def ctime(epoch: int) -> str:
    return time.strftime("%a %b %e %H:%M:%S %Y", time.gmtime(epoch))


def qstat_job(number: int) -> dict[str, Any]:
    running = number % 4 == 0
    user = f"user{number % 2000}"
    job: dict[str, Any] = {
        "Job_Name": f"relax-{number}",
        "Job_Owner": f"{user}@login1.hpc",
        "job_state": "R" if running else "Q",
        "queue": "workq",
        "server": "pbs.hpc",
        "Account_Name": f"proj{number % 300}",
        "Checkpoint": "u",
        "ctime": ctime(SUBMIT + number),
        "Error_Path": f"login1.hpc:/home/{user}/runs/{number}/relax.e{number}",
        "Hold_Types": "n",
        "Join_Path": "n",
        "Keep_Files": "n",
        "Mail_Points": "a",
        "mtime": ctime(SUBMIT + number + 60),
        "Output_Path": f"login1.hpc:/home/{user}/runs/{number}/relax.o{number}",
        "Priority": 0,
        "qtime": ctime(SUBMIT + number),
        "Rerunable": "True",
        "Resource_List": {
            "ncpus": 4 + number % 60,
            "mem": "16gb",
            "nodect": 1,
            "place": "free",
            "select": f"1:ncpus={4 + number % 60}:mem=16gb",
            "walltime": "24:00:00",
        },
        "substate": 42 if running else 10,
        "Variable_List": {
            "PBS_O_HOME": f"/home/{user}",
            "PBS_O_LANG": "en_US.UTF-8",
            "PBS_O_LOGNAME": user,
            "PBS_O_PATH": "/usr/local/bin:/usr/bin:/bin:/opt/pbs/bin:" + f"/home/{user}/bin",
            "PBS_O_MAIL": f"/var/spool/mail/{user}",
            "PBS_O_SHELL": "/bin/bash",
            "PBS_O_WORKDIR": f"/home/{user}/runs/{number}",
            "PBS_O_SYSTEM": "Linux",
            "PBS_O_QUEUE": "workq",
            "PBS_O_HOST": "login1.hpc",
        },
        "comment": "Job run at Thu Nov 26 at 10:00 on (n0001:ncpus=4)"
        if running
        else "Not Running: Insufficient amount of resource: ncpus",
        "etime": ctime(SUBMIT + number),
        "eligible_time": "00:10:00",
        "Submit_arguments": "-l select=1:ncpus=4 job.sh",
        "project": f"proj{number % 300}",
        "Submit_Host": "login1.hpc",
    }
    if running:
        job["stime"] = ctime(SUBMIT + number + 600)
        job["exec_host"] = f"n{number % 900:04d}/0*4"
        job["run_count"] = 1
    return job


def qstat_lines(size: int) -> Iterator[str]:
    yield '{\n    "timestamp":1790090000,\n    "pbs_version":"2022.1.1",\n'
    yield '    "pbs_server":"pbs.hpc",\n    "Jobs":{\n'
    written = number = 0
    while written < size:
        body = json.dumps({f"{number}.pbs.hpc": qstat_job(number)}, indent=4)[2:-2]
        text = ("," if number else "") + body.replace("\n", "\n    ") + "\n"
        written += len(text)
        number += 1
        yield text
    yield "    }\n}\n"


def run_import(command: str, path: Path, cluster: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-snapshots-") as folder:
        env = {
            **os.environ,
            "DATABASE_URL": f"sqlite:///{folder}/db.sqlite3",
            "DJANGO_SETTINGS_MODULE": "fairshare_site.settings",
        }
        manage = [sys.executable, str(ROOT / "manage.py")]
        subprocess.run([*manage, "migrate", "--no-input", "-v", "0"], env=env, check=True)
        started = time.perf_counter()
        done = subprocess.run(
            ["/usr/bin/time", "-v", *manage, command, str(path), "--cluster", cluster, "--json"],
            env=env,
            capture_output=True,
            text=True,
        )
        seconds = time.perf_counter() - started
    peak = re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr)
    figures: dict[str, Any] = {
        "seconds": seconds,
        "peak_mib": int(peak.group(1)) / 1024 if peak else None,
    }
    try:
        document = json.loads(done.stdout)
    except json.JSONDecodeError:
        document = {}
    figures["queued"] = document.get("queued")
    figures["running"] = document.get("running")
    rejects = document.get("rejects") or []
    figures["refused"] = rejects[0]["reason"][:90] if rejects else ""
    if done.returncode not in (0, 1):
        figures["refused"] = done.stderr.strip().splitlines()[-1][:90]
    return figures


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="bench-snapshot-files-") as folder:
        for size in SIZES:
            for name, lines, command in (
                ("squeue --json", squeue_lines, "import_squeue"),
                ("qstat -f -F json", qstat_lines, "import_qstat"),
            ):
                path = Path(folder) / f"{command}-{size}.json"
                with path.open("w") as out:
                    out.writelines(lines(size << 20))
                megabytes = path.stat().st_size / 1e6
                figures = run_import(command, path, f"bench{size}")
                said = f"; refused: {figures['refused']}" if figures["refused"] else ""
                print(
                    f"{command} of a {megabytes:,.0f} MB {name}: queued {figures['queued']},"
                    f" running {figures['running']}, {figures['seconds']:.1f} s, peak"
                    f" {figures['peak_mib']:,.0f} MiB{said}",
                    flush=True,
                )
                path.unlink()


if __name__ == "__main__":
    main()
