"""What the three ingest commands share: paths in, a progress bar, the summary or --json."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import CommandParser
from tqdm import tqdm

from accounting.job_rows import input_size
from accounting.models import IngestSource
from accounting.services.ingest import IngestOptions, IngestResult, ingest
from trees.engine.formula import FormulaError
from trees.management.commands._base import FairshareCommand
from trees.models import Scheduler


class IngestCommand(FairshareCommand):
    source: IngestSource
    snapshot = False  # a snapshot of the queue: an empty one says the queue is empty

    def add_arguments(self, parser: CommandParser) -> None:
        super().add_arguments(parser)
        parser.add_argument(
            "--json", action="store_true", help="print the counts and every rejected line as JSON"
        )

    def add_create_nodes(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--create-nodes",
            action="store_true",
            help="build the users and projects the tree lacks (default: PBS puts them under"
            " `unknown`; Slurm jobs stay unlinked and are listed)",
        )
        parser.add_argument(
            "--shares", type=int, default=1, help="shares of each node --create-nodes builds"
        )

    def run_ingest(self, paths: Sequence[str], options: dict[str, Any], **chosen: Any) -> None:
        if options.get("shares", 1) < 0:
            self.fail("--shares must be 0 or more")
        total = input_size(paths)
        show = not options["json"] and sys.stderr.isatty()
        with tqdm(total=total, unit="B", unit_scale=True, disable=not show, file=sys.stderr) as bar:
            try:
                result = ingest(
                    cluster_name=options["cluster"],
                    source=self.source,
                    paths=paths,
                    options=IngestOptions(
                        create_nodes=options.get("create_nodes", False),
                        shares=options.get("shares", 1),
                        **chosen,
                    ),
                    progress=bar.update,
                )
            except FormulaError as exc:
                self.fail(f"cluster {options['cluster']}: fairshare_usage_res: {exc}")
            except ValidationError as exc:
                self.fail(f"cluster {options['cluster']}: {'; '.join(exc.messages)}")
        if options["json"]:
            self.stdout.write(json.dumps(result.document(), indent=2))
        else:
            self._report(result)
        if not result.stored_anything and not (self.snapshot and not result.run.rejected):
            self.fail("nothing ingested: no job run in the input")

    def _report(self, result: IngestResult) -> None:
        for summary in result.files:
            for bad in summary.rejects:
                self.stderr.write(f"{summary.path}:{bad.line}: {bad.field}: {bad.reason}")
            types = ", ".join(f"{n} {kind}" for kind, n in sorted(summary.record_types.items()))
            self.stdout.write(
                f"{summary.path}: read {summary.read} ({types or 'no records'}); ingested"
                f" {summary.ingested}, running {summary.running}, queued {summary.queued},"
                f" duplicates {summary.duplicates}, rejected {summary.rejected}"
                + (f", left the queue {summary.left_queue}" if self.snapshot else "")
            )
        run = result.run
        self.stdout.write(
            f"cluster {run.cluster.name}: {len(result.files)} files; read {run.read}, ingested"
            f" {run.ingested}, running {run.running}, queued {run.queued}, duplicates"
            f" {run.duplicates}, rejected"
            f" {run.rejected} in {run.duration or 0:.1f} s"
        )
        if result.created_nodes:
            self.stdout.write(
                f"created {len(result.created_nodes)} nodes: {', '.join(result.created_nodes)}"
            )
        if result.unknown_entities:
            where = (
                "not in the tree; their jobs are stored unlinked (--create-nodes builds them)"
                if run.cluster.scheduler == Scheduler.SLURM
                else "not in the tree; charged under `unknown`, as PBS does"
            )
            self.stdout.write(
                f"{len(result.unknown_entities)} entities {where}:"
                f" {', '.join(result.unknown_entities)}"
            )
