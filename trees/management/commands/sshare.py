import getpass
from typing import Any

from django.core.management.base import CommandParser

from trees.management.commands._base import FairshareCommand
from trees.models import Scheduler
from trees.selectors.slurm import sshare_get


def _names(text: str | None) -> list[str] | None:
    return None if text is None else [name for name in text.split(",") if name]


class Command(FairshareCommand):
    help = (
        "Print the cluster's associations as Slurm's sshare does: -a (every user), -l (long),"
        " -P / -p (parsable), -n (no header), -u USERS, -A ACCOUNTS."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        super().add_arguments(parser)
        parser.add_argument("-a", "--all", action="store_true", help="every user's rows")
        parser.add_argument("-l", "--long", action="store_true", help="the long column set")
        layout = parser.add_mutually_exclusive_group()
        layout.add_argument("-P", "--parsable2", action="store_true", help="`|` between fields")
        layout.add_argument("-p", "--parsable", action="store_true", help="`|` after each field")
        parser.add_argument("-n", "--noheader", action="store_true", help="no header line")
        parser.add_argument("-u", "--users", metavar="USERS", help="these users' rows (a,b,...)")
        parser.add_argument("-A", "--accounts", metavar="ACCOUNTS", help="these accounts only")

    def handle(self, *args: Any, **options: Any) -> None:
        cluster = self.existing_cluster(options["cluster"])
        if cluster.scheduler != Scheduler.SLURM:
            self.fail(f"cluster {cluster.name} is not a Slurm cluster; use pbsfs")
        users = _names(options["users"])
        if users is None and not options["all"]:
            users = [getpass.getuser()]  # sshare without -a: the caller's own rows
        text = sshare_get(
            cluster=cluster,
            long=options["long"],
            parsable="P" if options["parsable2"] else "p" if options["parsable"] else "",
            header=not options["noheader"],
            users=users,
            accounts=_names(options["accounts"]),
        )
        self.stdout.write(text, ending="")
