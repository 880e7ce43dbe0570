import sys
from datetime import timedelta
from typing import Any

from django.core.management.base import CommandParser
from tqdm import tqdm

from accounting.services.cycles import CycleRefused
from accounting.services.replay import replay
from trees.management.commands._base import FairshareCommand

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86_400}


class Command(FairshareCommand):
    help = (
        "Replay the cluster's ingested job runs cycle by cycle in simulated time, with decay,"
        " from no usage: the usage, metrics, history and cycles a deployment running since"
        " --from would have stored by --until. Replaces the cluster's cycles and history."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        super().add_arguments(parser)
        parser.add_argument(
            "--from", dest="start", help="first cycle (ISO 8601; default: the first job start)"
        )
        parser.add_argument(
            "--until", help="last cycle (ISO 8601; default: after the last job end)"
        )
        parser.add_argument(
            "--step",
            help="time between cycles: 30s, 10m, 1h, 1d (default: the cluster's cycle period,"
            " PBS scheduler_iteration or Slurm PriorityCalcPeriod; with PBS usage_recording"
            " pbs, PBS's own cycles: its imported log's, else those its jobs make)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        cluster = self.existing_cluster(options["cluster"])
        start = self.moment("--from", options["start"])
        until = self.moment("--until", options["until"])
        step = None if options["step"] is None else self._step(options["step"])
        bar: tqdm[Any] | None = None
        reported = -1

        def progress(done: int, total: int) -> None:
            nonlocal bar, reported
            if sys.stderr.isatty():
                if bar is None:
                    bar = tqdm(total=total, unit="cycle", file=sys.stderr)
                bar.update(done - bar.n)
                return
            percent = done * 10 // total * 10
            if percent != reported:  # a line each 10 % when not on a terminal
                reported = percent
                self.stderr.write(f"replay: {done:,} of {total:,} cycles ({percent} %)")

        try:
            result = replay(cluster=cluster, start=start, until=until, step=step, progress=progress)
        except CycleRefused as refusal:
            self.fail(str(refusal))
        finally:
            if bar is not None:
                bar.close()
        self.stdout.write(
            f"{cluster.name}: replayed {result.cycles:,} cycles from {result.first.isoformat()}"
            f" to {result.last.isoformat()}: {result.runs:,} runs accrued,"
            f" {result.usage_added:.6g} usage added, {result.decays:,} decays,"
            f" {result.history_rows:,} history rows kept"
        )

    def _step(self, text: str) -> timedelta:
        number, unit = text[:-1], text[-1:]
        if unit not in _UNITS or not number.isdigit() or int(number) == 0:
            self.fail(f"--step {text}: not a duration such as 30s, 10m, 1h or 1d")
        return timedelta(seconds=int(number) * _UNITS[unit])
