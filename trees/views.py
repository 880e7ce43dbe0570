from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from trees.selectors import cluster_listing_get, clusters_list


def index(request: HttpRequest) -> HttpResponse:
    """Every cluster with what its scheduler's tool prints for it (pbsfs -p, sshare -a -l)."""
    clusters = [(cluster, cluster_listing_get(cluster=cluster)) for cluster in clusters_list()]
    return render(request, "trees/index.html", {"clusters": clusters})
