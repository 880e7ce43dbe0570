from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from trees.selectors import clusters_list, pbsfs_listing_get


def index(request: HttpRequest) -> HttpResponse:
    """Every cluster with the listing `pbsfs -p` prints for it."""
    clusters = [(cluster, pbsfs_listing_get(cluster=cluster)) for cluster in clusters_list()]
    return render(request, "trees/index.html", {"clusters": clusters})
