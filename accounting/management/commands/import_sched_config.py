from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import CommandParser

from accounting.services.pricing import sched_config_import
from trees.formats.sched_config import parse_sched_config
from trees.management.commands._base import FairshareCommand


class Command(FairshareCommand):
    help = (
        "Take the fairshare keys of a PBS sched_config (fairshare_usage_res, fairshare_entity, "
        "fairshare_decay_time, fairshare_decay_factor, unknown_shares) and those that order "
        "and start jobs (fair_share, by_queue, strict_ordering, backfill, job_sort_key, and "
        "backfill_depth, the server's attribute, if the file sets it); unset keys get PBS's "
        "defaults, as the scheduler would use. The dashboard keeps non-prime time: a line "
        "without a prime option, or with all or non_prime, is taken; one with prime or none "
        "is checked and listed as not applied."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        super().add_arguments(parser)
        parser.add_argument("file", help="the sched_config file")

    def handle(self, *args: Any, **options: Any) -> None:
        path = options["file"]
        config = parse_sched_config(self.read_bytes(path))
        for problem in config.problems:
            self.stderr.write(f"{path}:{problem.line}: {problem.key}: {problem.reason}")
        try:
            sched_config_import(cluster_name=options["cluster"], config=config)
        except ValidationError as exc:
            self.fail(f"{path}: nothing imported: {'; '.join(exc.messages)}")
        self.stdout.write(
            f"{path}: cluster {options['cluster']}: "
            f"fairshare_usage_res {config.fairshare_usage_res}"
            f", fairshare_entity {config.fairshare_entity}, decay_time {config.decay_time} s"
            f", decay_factor {config.decay_factor}, unknown_shares {config.unknown_shares}"
            f", fair_share {config.fair_share}, by_queue {config.by_queue}"
            f", strict_ordering {config.strict_ordering}, backfill {config.backfill}"
            f", backfill_depth {config.backfill_depth}"
            f", job_sort_key {_sort_keys(config.job_sort_key)}"
            f" ({len(config.found)} keys read, {len(config.problems)} refused"
            f", {len(config.unapplied)} not applied)"
        )
        for line in config.unapplied:
            self.stdout.write(f"{path}: {line}")


def _sort_keys(keys: list[tuple[str, str]]) -> str:
    return "; ".join(f"{name} {order}" for name, order in keys) or "none"
