from typing import Any

from django.core.management.base import CommandParser

from trees.management.commands._base import FairshareCommand
from trees.services.pbs import pbsfs_run


class _PbsfsParser(CommandParser):
    """Takes --cluster and Django's own options; everything else is pbsfs's, untouched.

    pbsfs parses its options with GNU getopt (permuted, last mode wins, `-s -- NAME -5`), which
    argparse cannot express; `run_pbsfs` does that parsing itself.
    """

    def parse_args(self, args: Any = None, namespace: Any = None) -> Any:
        known, rest = self.parse_known_args(args, namespace)
        known.pbsfs_args = rest
        return known


class Command(FairshareCommand):
    help = (
        "Show and change the cluster's fairshare usage as OpenPBS pbsfs does, with its "
        "options: -p (default), -t, -g ENTITY, -c A B, -s ENTITY USAGE, -d, -e."
    )

    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> CommandParser:
        parser = super().create_parser(prog_name, subcommand, **kwargs)
        parser.__class__ = _PbsfsParser  # Django builds the parser itself; keep its options
        return parser

    def handle(self, *args: Any, **options: Any) -> None:
        cluster = self.pbs_cluster(options["cluster"])
        result = pbsfs_run(cluster=cluster, argv=[*args, *options.get("pbsfs_args", [])])
        self.stdout.write(result.stdout, ending="")
        self.stderr.write(result.stderr, style_func=lambda text: text, ending="")
        if result.status:
            raise SystemExit(result.status)
