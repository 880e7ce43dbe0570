import gzip
import json
from pathlib import Path
from typing import Any

from django.core.management.base import CommandParser

from accounting.services.whatif import WhatIfError, WhatIfParameters, whatif_run
from accounting.whatif import TraceJobs, swf_trace_jobs
from trees.engine.whatif import ORDERS
from trees.formats.whatif import format_whatif_text, parse_backfill
from trees.management.commands._base import FairshareCommand
from trees.models import Cluster

_GZIP_MAGIC = b"\x1f\x8b"


class Command(FairshareCommand):
    help = (
        "Replay a cluster's stored jobs (or an SWF trace) under the cluster's policy, and with"
        " --set under a variant of it: each entity's and project's waits and delivered share,"
        " the cluster's utilization and Jain's index, and how the baseline matches what really"
        " happened. Nothing is stored."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--cluster", metavar="NAME", help="the cluster (its policy, its jobs)")
        parser.add_argument("--swf", metavar="PATH", help="replay this SWF trace (.swf, .swf.gz)")
        parser.add_argument("--from", dest="since", metavar="ISO", help="first submit replayed")
        parser.add_argument("--until", metavar="ISO", help="submits before this are replayed")
        parser.add_argument("--cores", type=int, metavar="N", help="the pool's cores")
        parser.add_argument(
            "--gpus", type=int, metavar="N", help="the GPU pool (default: the cluster's)"
        )
        parser.add_argument(
            "--nodes", type=int, metavar="N", help="the node pool (default: the cluster's)"
        )
        parser.add_argument(
            "--order",
            choices=ORDERS,
            help="submit order, or the cluster's policy (default: policy with --cluster)",
        )
        parser.add_argument(
            "--backfill",
            metavar="none|greedy|easy|N",
            help="the discipline (default: the cluster's: PBS's sched_config, Slurm easy)",
        )
        parser.add_argument(
            "--set",
            dest="changes",
            action="append",
            default=[],
            metavar="KEY=VALUE",
            help="a change making the variant: shares:NODE=N, fair_share=false,"
            " fairshare_decay_time=..., job_sort_formula=..., backfill_depth=N,"
            " PriorityWeightAge=..., PriorityFlags=...; repeat for several",
        )
        parser.add_argument("--format", choices=("text", "json"), default="text")
        parser.add_argument("--jobs", action="store_true", help="list each job's start (JSON)")

    def handle(self, *args: Any, **options: Any) -> None:
        if not options["cluster"] and not options["swf"]:
            self.fail("give --cluster NAME (its stored jobs), --swf PATH, or both")
        cluster: Cluster | None = None
        if options["cluster"]:
            cluster = self.existing_cluster(options["cluster"])
        for pool in ("cores", "gpus", "nodes"):
            if options[pool] is not None and options[pool] < 1:
                self.fail(f"--{pool} {options[pool]}: give 1 or more")
        backfill = None
        if options["backfill"] is not None:
            try:
                backfill = parse_backfill(options["backfill"])
            except ValueError as error:
                self.fail(f"--{error}")
        since = self.moment("--from", options["since"])
        until = self.moment("--until", options["until"])
        if since is not None and until is not None and since >= until:
            self.fail(f"--from {options['since']} is not before --until {options['until']}")
        trace = self._trace(options["swf"]) if options["swf"] else None
        parameters = WhatIfParameters(
            order=options["order"], backfill=backfill, since=since, until=until,
            cores=options["cores"], settings=tuple(options["changes"]), gpus=options["gpus"],
            nodes=options["nodes"],
        )  # fmt: skip
        try:
            outcome = whatif_run(
                cluster=cluster, parameters=parameters, trace=trace, with_jobs=options["jobs"]
            )
        except WhatIfError as error:
            self.fail(str(error))
        if options["format"] == "json":
            self.stdout.write(json.dumps(outcome.document, indent=1, allow_nan=False))
        else:
            self.stdout.write(format_whatif_text(outcome.document, outcome.sentence), ending="")

    def _trace(self, path: str) -> TraceJobs:
        try:
            with Path(path).open("rb") as raw:
                compressed = raw.read(2) == _GZIP_MAGIC
            if compressed:
                with gzip.open(path, "rb") as lines:
                    trace = swf_trace_jobs(lines)
            else:
                with Path(path).open("rb") as lines:
                    trace = swf_trace_jobs(lines)
        except (OSError, EOFError) as exc:
            self.fail(f"{path}: cannot read: {getattr(exc, 'strerror', None) or exc}")
        for bad in trace.rejected[:20]:
            self.stderr.write(f"{path}:{bad.line}: {bad.field}: {bad.reason}")
        if len(trace.rejected) > 20:
            self.stderr.write(f"{path}: {len(trace.rejected) - 20} more lines rejected")
        if not trace.jobs:
            self.fail(
                f"{path}: no job read: not an SWF trace ({len(trace.rejected)} lines rejected)"
            )
        return trace
