"""The admins' forms: the share editing form (one row per child of a node, and blank rows for
new ones, with the reason and what ties the edit to the tree it was made on), and a cluster's
settings."""

from __future__ import annotations

import hashlib
from datetime import date, timedelta
from typing import Any

from django import forms
from django.conf import settings

from trees.engine.edit import ChildEdit
from trees.engine.pbs import INT_MAX, ROOT_ALIAS, resource_group_parent
from trees.formats.sched_config import MAX_DECAY_TIME
from trees.models import (
    FAIRSHARE_RELATIVE_MODES,
    USAGE_RECORDINGS,
    Cluster,
    Scheduler,
    TokenScope,
)
from trees.quantities import span_text
from trees.services.clusters import CLUSTER_SETTINGS
from trees.services.tokens import MAX_TOKEN_DAYS

NEW_ROWS = 3
MAX_RELATIVE_ALPHA = 1000.0  # fairshare.relative_alpha: far beyond Accelerator's default 10


class ChildForm(forms.Form):
    """A child: its name, parent (to move it) and shares; or a new child when `original` is
    empty. A new row left blank is no change."""

    original = forms.CharField(required=False, widget=forms.HiddenInput)
    name = forms.CharField(max_length=255, required=False)
    parent = forms.CharField(
        max_length=255,
        required=False,
        help_text=f"a group's name, or `{ROOT_ALIAS}`",
        widget=forms.TextInput(attrs={"list": "parents"}),  # the page's datalist of groups
    )
    shares = forms.IntegerField(min_value=0, max_value=INT_MAX, required=False)
    remove = forms.BooleanField(required=False)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # The table's head names the columns; each input also says whose it is, to a screen
        # reader that lands on it alone.
        whose = self.initial.get("original") or "the new child"
        for field, said in (("name", "Name of"), ("shares", "Shares of"), ("parent", "Parent of"),
                            ("remove", "Remove")):  # fmt: skip
            self.fields[field].widget.attrs["aria-label"] = f"{said} {whose}"

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if self.blank():
            return data
        if not data.get("name") and "name" not in self.errors:
            self.add_error("name", "a name is required")
        if data.get("shares") is None and "shares" not in self.errors and not data.get("remove"):
            self.add_error("shares", "shares are required: a whole number, 0 or more")
        if not data.get("parent") and "parent" not in self.errors:
            self.add_error("parent", f"a parent is required (`{ROOT_ALIAS}` for the top)")
        return data

    def blank(self) -> bool:
        """A new row with no name and no shares typed: not a change."""

        def typed(field: str) -> str:
            return str(self.data.get(self.add_prefix(field), "")).strip()

        return not typed("original") and not typed("name") and not typed("shares")

    def edit(self) -> ChildEdit:
        data = self.cleaned_data
        parent = data["parent"].strip()
        return ChildEdit(
            original=data["original"],
            name=data["name"].strip(),
            parent=resource_group_parent(parent),
            shares=data["shares"] if data["shares"] is not None else 0,
            remove=bool(data["remove"]) and bool(data["original"]),
        )


ChildFormSet = forms.formset_factory(ChildForm, extra=0)


class EditForm(forms.Form):
    """What goes with the rows: the reason (required to save) and the edit's ties to the tree:
    the version of the entries it was made on, when it was read, and the preview it saves."""

    reason = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 2, "cols": 60}),
        required=False,
        max_length=2000,
        help_text="Required to save; it goes into the audit trail with every change.",
    )
    version = forms.CharField(widget=forms.HiddenInput)
    opened_at = forms.DateTimeField(widget=forms.HiddenInput)
    previewed = forms.CharField(widget=forms.HiddenInput, required=False)


def edit_digest(version: str, edits: list[ChildEdit]) -> str:
    """What a preview was of: the save must be of the same edits on the same version."""
    digest = hashlib.sha256(version.encode())
    for edit in edits:
        digest.update(repr(edit).encode())
    return digest.hexdigest()[:32]


class ClusterSettingsForm(forms.Form):
    """A cluster's settings, the fields of its scheduler only; times in seconds, as
    sched_config's decay_time and qmgr's scheduler_iteration give them."""

    private_usage = forms.BooleanField(
        required=False,
        help_text="Members see only their own path and its siblings' totals (Slurm's"
        " PrivateData=usage); off, any logged-in person reads the whole tree.",
    )
    decay_interval = forms.IntegerField(
        label="decay_time (s)",
        min_value=1,
        max_value=MAX_DECAY_TIME,
        help_text="PBS decays usage this often (sched_config decay_time).",
    )
    decay_factor = forms.FloatField(
        min_value=0.0,
        max_value=1.0,
        help_text="Each decay multiplies usage by this (sched_config fairshare_decay_factor).",
    )
    scheduler_iteration = forms.IntegerField(
        label="scheduler_iteration (s)",
        min_value=1,
        max_value=MAX_DECAY_TIME,
        help_text="How often PBS's scheduling cycle runs, and so the dashboard's cycles.",
    )
    usage_recording = forms.ChoiceField(
        choices=USAGE_RECORDINGS,
        help_text="How the cycles charge a job: exact charges all it used, spread evenly over"
        " its run; pbs charges what PBS records of it, its usage at the last MoM poll that a"
        " scheduling cycle read while it ran, so that the dashboard's usage matches PBS's"
        " usage database. It applies to what the cycles charge from the change on.",
        error_messages={"invalid_choice": "usage_recording must be exact or pbs."},
    )
    priority_decay_half_life = forms.IntegerField(
        label="PriorityDecayHalfLife (s)",
        min_value=0,
        max_value=MAX_DECAY_TIME,
        help_text="Raw usage halves over this time; 0: no decay.",
    )
    priority_calc_period = forms.IntegerField(
        label="PriorityCalcPeriod (s)",
        min_value=1,
        max_value=MAX_DECAY_TIME,
        help_text="How often slurmctld charges and decays usage, and so the dashboard's cycles.",
    )
    fairshare_relative = forms.TypedChoiceField(
        label="fairshare.relative",
        choices=FAIRSHARE_RELATIVE_MODES,
        coerce=int,
        help_text="How Accelerator measures a group's distance from its target to rank it"
        " (FS_RANK): 0 adds the running and history excesses, 1 divides that by the target,"
        " 2 weighs the history's by fairshare.relative_alpha. The furthest under its target"
        " is dispatched first.",
    )
    fairshare_relative_alpha = forms.FloatField(
        label="fairshare.relative_alpha",
        min_value=0.0,
        max_value=MAX_RELATIVE_ALPHA,
        help_text="With fairshare.relative 2, the weight of the history's excess against the"
        " running excess (Accelerator's default 10: the last window counts ten times more than"
        " what runs now).",
    )
    cores = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=INT_MAX,
        help_text="The cores the jobs are placed on: the pool a what-if replays them on."
        " Empty: not known (each what-if then gives its own).",
    )
    gpus = forms.IntegerField(
        required=False,
        label="GPUs",
        min_value=1,
        max_value=INT_MAX,
        help_text="The GPUs the jobs are placed on: a what-if counts the jobs' GPUs against them."
        " Empty: GPUs are not counted.",
    )
    compute_nodes = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=INT_MAX,
        help_text="The nodes the jobs are placed on: a what-if counts the jobs' nodes against"
        " them (a job on a node holds it whole). Empty: nodes are not counted.",
    )
    reason = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}), max_length=2000)

    def __init__(self, data: Any = None, *, cluster: Cluster) -> None:
        kept = CLUSTER_SETTINGS[Scheduler(cluster.scheduler)]
        initial = {
            name: int(value.total_seconds()) if isinstance(value, timedelta) else value
            for name in kept
            for value in [getattr(cluster, name)]
        }
        super().__init__(data, initial=initial)
        for name in list(self.fields):
            if name not in (*kept, "reason"):
                del self.fields[name]
            elif name in _DURATIONS:  # 604800 s reads better beside "now 7 days"
                now = span_text(getattr(cluster, name))
                self.fields[name].help_text += f" Now {now}."
        if cluster.scheduler == Scheduler.ACCELERATOR:
            self.fields["scheduler_iteration"].help_text = (
                "How often the dashboard's cycles recompute the FS_* fields from the jobs"
                " imported and keep them in history."
                f" Now {span_text(cluster.scheduler_iteration)}."
            )

    def settings(self) -> dict[str, object]:
        """The cleaned values as the cluster holds them (durations as timedelta)."""
        return {
            name: timedelta(seconds=value) if name in _DURATIONS else value
            for name, value in self.cleaned_data.items()
            if name != "reason"
        }


_DURATIONS = ("decay_interval", "scheduler_iteration", "priority_decay_half_life",
              "priority_calc_period")  # fmt: skip


# The usage-loss table's orders (`sort`): the most lost first by default.
USAGE_LOSS_SORTS = ("lost", "lost_fraction", "actual", "recorded", "jobs", "unseen", "entity")
FIRST_DAY = date(1970, 1, 1)  # accounting logs begin after the epoch
LAST_DAY = date(9998, 12, 31)  # the day after it is still a date


class UsageLossForm(forms.Form):
    """The usage-loss page's query: the jobs that ended from the day `from` to the day
    `until`, both included (the page's default, the last 7 days, when absent), and the
    entities' order. Its messages never repeat what was sent."""

    until = forms.DateField(
        required=False,
        input_formats=["%Y-%m-%d"],
        error_messages={"invalid": "until must be a date, such as 2026-11-28."},
    )
    sort = forms.ChoiceField(
        required=False,
        choices=[(key, key) for key in USAGE_LOSS_SORTS],
        error_messages={"invalid_choice": f"sort must be one of {', '.join(USAGE_LOSS_SORTS)}."},
    )

    def __init__(self, data: Any = None) -> None:
        super().__init__(data)
        # `from` is Python's keyword: the field is added by name, first.
        self.fields = {
            "from": forms.DateField(
                required=False,
                input_formats=["%Y-%m-%d"],
                error_messages={"invalid": "from must be a date, such as 2026-11-21."},
            ),
            **self.fields,
        }

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        for name in ("from", "until"):
            day = data.get(name)
            if day is not None and not FIRST_DAY <= day <= LAST_DAY:
                self.add_error(name, f"{name} must be a day from {FIRST_DAY} to {LAST_DAY}.")
        since, until = data.get("from"), data.get("until")
        if since and until and until < since and not self.errors:
            self.add_error("until", f"until ({until}) is before from ({since}).")
        return data

    def days(self) -> tuple[date | None, date | None]:
        """The first and the last day asked for (None: not given)."""
        return self.cleaned_data.get("from"), self.cleaned_data.get("until")

    def order(self) -> str:
        """The entities' order asked for, the most lost first when none."""
        return self.cleaned_data.get("sort") or USAGE_LOSS_SORTS[0]


class ApiTokenForm(forms.Form):
    """A new API token: its name, lifetime and scope. Every scope is a valid answer, so that a
    member's forged `read write` reaches the service and is refused with why; the admins'
    scopes are offered to admins only. The field names are the service's error keys."""

    name = forms.CharField(
        max_length=100,
        help_text="What it is for, e.g. “Grafana on ops1”: you tell your tokens apart by it.",
    )
    expires_days = forms.IntegerField(
        label="Expires after (days)",
        min_value=1,
        max_value=MAX_TOKEN_DAYS,
        help_text=f"From 1 to {MAX_TOKEN_DAYS}; then its program is refused: give it a new one.",
    )
    scope = forms.ChoiceField(choices=TokenScope.choices)

    def __init__(self, data: Any = None, *, admin: bool) -> None:
        super().__init__(
            data, initial={"expires_days": settings.API_TOKEN_DAYS, "scope": TokenScope.READ}
        )
        if not admin:
            self.fields["scope"].widget.choices = [(TokenScope.READ, TokenScope.READ.label)]
            self.fields["scope"].help_text = "Pushing accounting and /metrics are for admins."
