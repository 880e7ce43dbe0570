import json
from typing import Any

from django.core.management.base import CommandParser

from trees.management.commands._base import FairshareCommand
from trees.selectors.tree import tree_get
from trees.serializers import tree_document


class Command(FairshareCommand):
    help = "Write every node of the cluster's tree with its metrics (the API's field names)."

    def add_arguments(self, parser: CommandParser) -> None:
        super().add_arguments(parser)
        parser.add_argument("--format", choices=["json"], default="json")
        parser.add_argument("-o", "--output", metavar="FILE", help="write here, not to stdout")

    def handle(self, *args: Any, **options: Any) -> None:
        cluster = self.existing_cluster(options["cluster"])
        text = json.dumps(tree_document(cluster, tree_get(cluster=cluster)), indent=1) + "\n"
        self.write_text(options["output"], text)
