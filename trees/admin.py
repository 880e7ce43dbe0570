from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils import timezone

from trees.models import ApiToken, Cluster, Membership, Node, Person, SettingChange, ShareChange
from trees.services.tokens import api_tokens_revoke


@admin.register(Cluster)
class ClusterAdmin(admin.ModelAdmin[Cluster]):
    list_display = ["name", "scheduler", "fairshare_usage_res", "decay_factor", "decay_interval"]

    # Clusters are made by the imports (a PBS one starts with TREEROOT and unknown) and set on
    # their settings page, both through the services; here they are only read or removed.
    def has_add_permission(self, request: object) -> bool:
        return False

    def has_change_permission(self, request: object, obj: object = None) -> bool:
        return False


@admin.register(Node)
class NodeAdmin(admin.ModelAdmin[Node]):
    """Read only: shares change through the audited services, never here."""

    list_display = ["name", "cluster", "kind", "shares", "usage", "fairshare_perc"]
    list_filter = ["cluster", "kind", "origin"]
    search_fields = ["name"]

    def has_add_permission(self, request: object) -> bool:
        return False

    def has_change_permission(self, request: object, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: object, obj: object = None) -> bool:
        return False


@admin.register(ShareChange)
class ShareChangeAdmin(admin.ModelAdmin[ShareChange]):
    list_display = ["changed_at", "cluster", "node_name", "old_shares", "new_shares", "changed_by"]
    list_filter = ["cluster"]

    def has_add_permission(self, request: object) -> bool:
        return False

    def has_change_permission(self, request: object, obj: object = None) -> bool:
        return False


@admin.register(Person)
class PersonAdmin(admin.ModelAdmin[Person]):
    list_display = ["user", "scheduler_user"]
    search_fields = ["user__username", "scheduler_user"]


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin[Membership]):
    list_display = ["user", "role", "node", "cluster"]
    list_filter = ["role", "node__cluster"]
    search_fields = ["user__username", "node__name"]
    raw_id_fields = ["node"]

    @admin.display(ordering="node__cluster__name")
    def cluster(self, membership: Membership) -> str:
        return membership.node.cluster.name


@admin.register(SettingChange)
class SettingChangeAdmin(admin.ModelAdmin[SettingChange]):
    list_display = ["changed_at", "cluster", "setting", "old_value", "new_value", "changed_by"]
    list_filter = ["cluster"]

    def has_add_permission(self, request: object) -> bool:
        return False

    def has_change_permission(self, request: object, obj: object = None) -> bool:
        return False


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin[ApiToken]):
    """Everyone's tokens, to find and revoke a leaked one; made on the tokens page or by the
    api_token command only (the token is shown once, where it is made)."""

    list_display = ["user", "name", "prefix", "scope", "created_at", "expires_at", "last_used_at",
                    "revoked_at"]  # fmt: skip
    list_filter = ["scope"]
    search_fields = ["user__username", "name", "prefix"]
    actions = ["revoke"]

    def has_add_permission(self, request: object) -> bool:
        return False

    def has_change_permission(self, request: object, obj: object = None) -> bool:
        return False

    @admin.action(description="Revoke the selected tokens")
    def revoke(self, request: HttpRequest, queryset: QuerySet[ApiToken]) -> None:
        revoked = api_tokens_revoke(tokens=queryset, now=timezone.now())
        self.message_user(request, f"{revoked} token(s) revoked.")
