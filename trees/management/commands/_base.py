"""What every fairshare command shares: `--cluster`, failing with status 1, file reading."""

from __future__ import annotations

from datetime import date, datetime, time
from pathlib import Path
from typing import Any, NoReturn
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime

from trees.formats.lines import LineTooLong, bounded_bytes
from trees.formats.rejected import RejectedLine
from trees.models import Cluster, Scheduler
from trees.selectors.clusters import cluster_get
from trees.services.slurm import SlurmImport


class FairshareCommand(BaseCommand):
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--cluster", required=True, metavar="NAME", help="cluster name")

    def add_strict(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--strict", action="store_true", help="import nothing when any line is rejected"
        )

    def report_rejected(
        self, path: str, rejected: list[RejectedLine], *, strict: bool, kept: int
    ) -> None:
        """Each rejected line as FILE:LINE: FIELD: reason (after PBS's own words for it); stop
        when `--strict` was given or nothing is left to import."""
        for bad in rejected:
            for message in bad.pbs_messages:
                self.stderr.write(message)
            self.stderr.write(f"{path}:{bad.line}: {bad.field}: {bad.reason}")
        if rejected and (strict or not kept):
            self.fail(f"{path}: nothing imported ({len(rejected)} lines rejected)")

    def fail(self, message: str) -> NoReturn:
        """Say why nothing could be done, and exit 1."""
        self.stderr.write(message)
        raise SystemExit(1)

    def existing_cluster(self, name: str) -> Cluster:
        try:
            return cluster_get(name=name)
        except Cluster.DoesNotExist:
            self.fail(f"cluster {name!r} does not exist")

    def pbs_cluster(self, name: str) -> Cluster:
        """The PBS cluster of that name; a cluster of another scheduler is refused."""
        cluster = self.existing_cluster(name)
        if cluster.scheduler != Scheduler.PBS:
            self.fail(f"cluster {name} is a {cluster.get_scheduler_display()} cluster, not PBS")
        return cluster

    def moment(self, option: str, text: str | None) -> datetime | None:
        """An ISO date (its midnight) or date-time; without an offset, in TIME_ZONE."""
        if text is None:
            return None
        try:
            moment = parse_datetime(text)
            day: date | None = None if moment is not None else parse_date(text)
        except ValueError:
            moment = day = None
        if moment is None and day is not None:
            moment = datetime.combine(day, time())
        if moment is None:
            self.fail(f"{option} {text}: not an ISO 8601 date or time (e.g. 2026-01-31T08:00)")
        if timezone.is_naive(moment):
            moment = timezone.make_aware(moment)
        return moment

    def add_timezone(self, parser: CommandParser, whose: str) -> None:
        parser.add_argument(
            "--timezone",
            default=settings.TIME_ZONE,
            help=f"{whose} time zone, in which the file prints times (default: TIME_ZONE,"
            f" {settings.TIME_ZONE})",
        )

    def time_zone(self, options: dict[str, Any]) -> ZoneInfo:
        """The zone --timezone names; a name that is none fails the command."""
        try:
            return ZoneInfo(options["timezone"])
        except (ZoneInfoNotFoundError, ValueError):
            self.fail(f"--timezone {options['timezone']}: not a time zone (e.g. Europe/Oslo)")

    def write_text(self, path: str | None, text: str) -> None:
        """To the file given with -o, or to stdout."""
        if not path:
            self.stdout.write(text, ending="")
            return
        try:
            Path(path).write_text(text)
        except OSError as exc:
            self.fail(f"{path}: cannot write: {exc.strerror or exc}")

    def read_bytes(self, path: str) -> bytes:
        """A text file's bytes; one with a line no scheduler writes (MAX_LINE_BYTES) is refused
        whole, with its line, before it is read on."""
        try:
            return bounded_bytes(path)
        except LineTooLong as refused:
            self.fail(f"{path}:{refused.line}: line: {refused.reason}; nothing imported")
        except OSError as exc:
            self.fail(f"{path}: cannot read: {exc.strerror or exc}")

    def read_binary(self, path: str) -> bytes:
        try:
            return Path(path).read_bytes()
        except OSError as exc:
            self.fail(f"{path}: cannot read: {exc.strerror or exc}")


def slurm_import_summary(path: str, cluster: str, summary: SlurmImport, rejected: int) -> str:
    return (
        f"{path}: imported {summary.associations} associations into Slurm cluster {cluster}"
        f"{' (new)' if summary.cluster_created else ''}; rejected {rejected} lines;"
        f" {summary.created} nodes added, {summary.updated} updated, {summary.removed} removed"
    )
