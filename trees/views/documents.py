"""JSON answers of plain data (strings, numbers, lists, dicts), encoded by orjson: tree.json
carries megabytes for trees of 10,000 nodes, which the standard library's encoder writes
several times more slowly. A value JSON cannot hold (NaN, infinity) is written as null."""

import orjson
from django.http import HttpResponse


def document_response(document: object) -> HttpResponse:
    return HttpResponse(orjson.dumps(document), content_type="application/json")


def listing_response(cluster: str, documents: list[str]) -> HttpResponse:
    """tree.json of documents already encoded (a cluster's listing), as document_response
    would write {"cluster": cluster, "nodes": [...]}."""
    body = f'{{"cluster":{orjson.dumps(cluster).decode()},"nodes":[{",".join(documents)}]}}'
    return HttpResponse(body.encode(), content_type="application/json")
