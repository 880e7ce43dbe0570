"""The upload of a site's PBS files: which kind, which file(s), into which cluster; and a
policy what-if: its replay and the settings of its variant."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any, cast

from django import forms
from django.core.files.uploadedfile import UploadedFile

from accounting.services.scenarios import MAX_CORES, MAX_SETTING, MAX_SETTINGS
from accounting.services.site_files import SiteFile
from accounting.services.whatif import WhatIfParameters
from accounting.whatif_results import backfill_said
from trees.engine.pbs import INT_MAX, ROOT_ALIAS, TREEROOT, UNKNOWN
from trees.engine.slurm import USE_PARENT, Algorithm
from trees.engine.whatif import AcceleratorPolicy, PbsPolicy, Policy, SlurmPolicy, default_backfill
from trees.formats.sched_config import MAX_DECAY_TIME
from trees.formats.slurm_config import UINT32_MAX
from trees.formats.whatif import MAX_DEPTH, SettingError, apply_settings, parse_backfill
from trees.forms import MAX_RELATIVE_ALPHA
from trees.models import FAIRSHARE_RELATIVE_MODES, Cluster
from trees.quantities import span_text


class _MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class _MultipleFileField(forms.FileField):
    """Several files in one field (Django's documented way); none is a missing field."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(widget=_MultipleFileInput(), **kwargs)

    def clean(self, data: Any, initial: Any = None) -> list[UploadedFile]:
        single = super().clean
        if isinstance(data, list | tuple) and data:
            return [single(item, initial) for item in data]
        return [single(data or None, initial)]


NEW_CLUSTER = "+new"  # the cluster choice that makes one (no slug starts with +)


class SiteFilesForm(forms.Form):
    cluster = forms.ChoiceField(
        help_text="An existing cluster, or a new one named below: a typo makes none."
    )
    new_cluster = forms.SlugField(
        required=False,
        max_length=Cluster._meta.get_field("name").max_length,
        label="New cluster's name",
    )
    kind = forms.ChoiceField(choices=SiteFile.choices, widget=forms.RadioSelect)
    upload = _MultipleFileField(
        help_text="One file; several at once for accounting logs (read in name order, so that"
        " a job started in one day's log and ended in the next pairs up)."
    )
    skip_rejected = forms.BooleanField(
        required=False,
        label="Import the good lines of a resource_group and skip the rejected ones"
        " (by default one rejected line stops the import, as --strict)",
    )

    def __init__(self, *args: Any, cluster: Cluster | None = None, **kwargs: Any) -> None:
        """On a cluster's page the cluster is that one, not a field."""
        super().__init__(*args, **kwargs)
        self.fixed_cluster = cluster
        if cluster is not None:
            del self.fields["cluster"]
            del self.fields["new_cluster"]
        else:
            names = Cluster.objects.order_by("name").values_list("name", flat=True)
            cluster_field = self.fields["cluster"]
            assert isinstance(cluster_field, forms.ChoiceField)
            cluster_field.choices = [
                ("", "Choose a cluster"),
                *((name, name) for name in names),
                (NEW_CLUSTER, "A new cluster, named below"),
            ]

    def clean(self) -> dict[str, Any]:
        data = self.cleaned_data
        data["strict"] = not data.get("skip_rejected")
        data["created"] = False
        if self.fixed_cluster is not None:
            data["cluster"] = self.fixed_cluster.name
        elif data.get("cluster") == NEW_CLUSTER:
            name = data.get("new_cluster")
            if not name:
                self.add_error("new_cluster", "name the new cluster")
            elif Cluster.objects.filter(name=name).exists():
                self.add_error("new_cluster", f"cluster {name} exists: choose it above")
            else:
                data["cluster"], data["created"] = name, True
        files = data.get("upload") or []
        if len(files) > 1 and data.get("kind") not in (None, SiteFile.PBS_ACCOUNTING):
            self.add_error(
                "upload", f"a {data['kind']} import takes one file; give several for logs only"
            )
        return data


class ConfirmForm(forms.Form):
    """The admin's go-ahead for a previewed resource_group, with the audit trail's reason."""

    reason = forms.CharField(
        max_length=1000,
        widget=forms.Textarea(attrs={"rows": 2, "cols": 60}),
        help_text="Kept with every change in the audit trail.",
    )


# A what-if's form: the replay (window, pool, order, discipline), then the policy's values and
# top-level shares as they are now; each value changed becomes one KEY=VALUE of the variant.
MAX_SHARE_FIELDS = 60  # shares offered as fields; the others are typed as settings
SHARE_DEPTH = 2  # the levels of the tree whose shares are fields: the top and the one under it
MAX_TYPED = 50_000  # characters of the lines typed
DEPTHS_OFFERED = (2, 3, 5, 10)  # reservations offered beside none, greedy and EASY
_SLURM_WEIGHTS = (
    ("PriorityWeightAge", "weight_age"),
    ("PriorityWeightAssoc", "weight_assoc"),
    ("PriorityWeightFairShare", "weight_fairshare"),
    ("PriorityWeightJobSize", "weight_jobsize"),
    ("PriorityWeightPartition", "weight_partition"),
    ("PriorityWeightQOS", "weight_qos"),
)
_NOT_FAIR_TREE = {"NO_FAIR_TREE", "DEPTH_OBLIVIOUS"}  # either flag turns Fair Tree off
_SWITCHES = ("true", "false", "0", "1")  # what a switch's checkbox takes from an address


@dataclass
class Knob:
    """One value of the cluster's policy the form offers to change: the setting's KEY, its
    value now, its field, and how a new value is written as the setting's VALUE."""

    key: str
    now: Any
    field: forms.Field
    written: Callable[[Any], str] = str
    under: str = ""  # a share's parent, as the policy names it

    @property
    def name(self) -> str:
        """The form field's name: `set:` and the setting's key (`set:shares:physics`)."""
        return f"set:{self.key}"

    @property
    def now_said(self) -> str:
        """The value now as the form's column shows it: switches on or off, choices by name."""
        if isinstance(self.now, bool):
            return "on" if self.now else "off"
        if isinstance(self.field, forms.ChoiceField):
            labels = dict(cast(Iterable[tuple[Any, str]], self.field.choices))
            return str(labels.get(self.now, self.now))
        return str(self.now) if self.now != "" else "none"

    def changed(self, value: Any) -> bool:
        if value is None or value == "":
            return False  # a share left blank: as it is
        if isinstance(value, str):
            return " ".join(value.split()) != " ".join(str(self.now).split())
        return bool(value != self.now)


def _switch(label: str, help_text: str) -> forms.BooleanField:
    return forms.BooleanField(required=False, label=label, help_text=help_text)


def _switch_text(value: bool) -> str:
    return "true" if value else "false"


def _between_0_and_1(value: float) -> None:
    if not 0 < value < 1:
        raise forms.ValidationError("a decay factor is above 0 and below 1.")


def _slurm_time(seconds: int) -> str:
    """Seconds as slurm.conf writes a time: `7-00:00:00`."""
    days, left = divmod(seconds, 86400)
    return f"{days}-{left // 3600:02d}:{left % 3600 // 60:02d}:{left % 60:02d}"


def _pbs_knobs(policy: PbsPolicy) -> list[Knob]:
    decay = timedelta(seconds=policy.decay_interval)
    return [
        Knob("fair_share", policy.fair_share, _switch(
            "fair_share", "Jobs are ordered by their entity's standing (sched_config)."
        ), _switch_text),
        Knob("strict_ordering", policy.strict_ordering, _switch(
            "strict_ordering", "Jobs start in order: a blocked job waits for room instead of"
            " being passed by any that fits."
        ), _switch_text),
        Knob("backfill", policy.backfill, _switch(
            "backfill", "With strict_ordering, jobs that delay no reservation start ahead."
        ), _switch_text),
        Knob("backfill_depth", policy.backfill_depth, forms.IntegerField(
            min_value=0, max_value=MAX_DEPTH, label="backfill_depth",
            help_text="How many blocked jobs get a reservation; a change also turns"
            " strict_ordering on, and backfill on above 0.",
        )),
        Knob("fairshare_decay_time", policy.decay_interval, forms.IntegerField(
            min_value=1, max_value=MAX_DECAY_TIME, label="fairshare_decay_time (s)",
            help_text=f"Usage decays this often. Now {span_text(decay)}.",
        )),
        Knob("fairshare_decay_factor", policy.decay_factor, forms.FloatField(
            min_value=0.0, max_value=1.0, validators=[_between_0_and_1],
            label="fairshare_decay_factor", help_text="Each decay multiplies usage by this.",
        ), repr),
        Knob("job_sort_formula", policy.job_sort_formula, forms.CharField(
            required=False, max_length=MAX_SETTING, label="job_sort_formula",
            widget=forms.Textarea(attrs={"rows": 3, "cols": 34}),
            help_text="The jobs' priority (PBS's expression); empty: none.",
        ), lambda text: " ".join(text.split())),
    ]  # fmt: skip


def _slurm_knobs(policy: SlurmPolicy) -> list[Knob]:
    config = policy.config
    others = sorted(config.flags - _NOT_FAIR_TREE)

    def flags(choice: str) -> str:
        own = {"classic": ["NO_FAIR_TREE"], "depth_oblivious": ["DEPTH_OBLIVIOUS"]}
        chosen = [*others, *own.get(choice, [])]
        return ",".join(sorted(chosen)) or "(null)"

    half_life = timedelta(seconds=config.decay_half_life)
    knobs = [
        Knob(key, getattr(config, attribute), forms.IntegerField(
            min_value=0, max_value=UINT32_MAX, label=key,
        ))
        for key, attribute in _SLURM_WEIGHTS
    ]  # fmt: skip
    knobs += [
        Knob("PriorityFlags", Algorithm.of_flags(config.flags).value, forms.ChoiceField(
            choices=[("fair_tree", "Fair Tree"), ("classic", "classic (NO_FAIR_TREE)"),
                     ("depth_oblivious", "depth-oblivious classic (DEPTH_OBLIVIOUS)")],
            label="FairShare",
            help_text="PriorityFlags' NO_FAIR_TREE or DEPTH_OBLIVIOUS; the other flags stay.",
        ), flags),
        Knob("PriorityDecayHalfLife", config.decay_half_life, forms.IntegerField(
            min_value=0, max_value=UINT32_MAX, label="PriorityDecayHalfLife (s)",
            help_text=f"Raw usage halves over this time; 0: no decay. Now {span_text(half_life)}.",
        ), _slurm_time),
    ]  # fmt: skip
    return knobs


def _accelerator_knobs(policy: AcceleratorPolicy) -> list[Knob]:
    return [
        Knob("fairshare.relative", policy.relative, forms.TypedChoiceField(
            choices=FAIRSHARE_RELATIVE_MODES, coerce=int, label="fairshare.relative",
            help_text="How a group's distance from its target is measured to rank it.",
        )),
        Knob("fairshare.relative_alpha", policy.alpha, forms.FloatField(
            min_value=0.0, max_value=MAX_RELATIVE_ALPHA, label="fairshare.relative_alpha",
            help_text="With fairshare.relative 2, the history's weight against what runs now.",
        ), repr),
    ]  # fmt: skip


def _share_field(name: str) -> forms.IntegerField:
    # As the share edit form's: a whole number, 0 or more; blank leaves it as it is.
    return forms.IntegerField(min_value=0, max_value=INT_MAX, required=False, label=name)


def _share_knobs(policy: Policy) -> list[Knob]:
    """The shares of the tree's top SHARE_DEPTH levels, in the policy's order (PBS: groups
    and entities; Slurm: accounts; Accelerator: FairShare groups, not users' leaves)."""
    shares: list[tuple[str, int, str]] = []
    if isinstance(policy, PbsPolicy):
        parent = {group.name: group.parent for group in policy.groups}
        for group in policy.groups:
            if group.name != UNKNOWN and _depth(group.name, parent) <= SHARE_DEPTH:
                shares.append((group.name, group.shares, group.parent))
    elif isinstance(policy, SlurmPolicy):
        accounts = {a.account: a.parent for a in policy.associations if a.user is None}
        for association in policy.associations:
            name = association.account
            if (
                association.user is None
                and association.parent is not None
                and association.shares != USE_PARENT
                and _depth(name, accounts) <= SHARE_DEPTH
            ):
                shares.append((name, association.shares, association.parent))
    else:
        for fs_group in policy.groups:
            above, _, last = fs_group.path.rpartition("/")
            if "." not in last and 1 <= fs_group.path.count("/") <= SHARE_DEPTH:
                shares.append((fs_group.path, fs_group.weight, above or "/"))
    return [
        Knob(f"shares:{name}", now, _share_field(name), under=under) for name, now, under in shares
    ]


def _depth(name: str, parent: Mapping[str, str | None]) -> int:
    """Levels below the root (its children: 1), at most SHARE_DEPTH + 1."""
    depth = 1
    above = parent.get(name)
    while above is not None and above not in (ROOT_ALIAS, TREEROOT) and depth <= SHARE_DEPTH:
        depth += 1
        above = parent.get(above)
    return depth


def policy_knobs(policy: Policy) -> list[Knob]:
    if isinstance(policy, PbsPolicy):
        return _pbs_knobs(policy)
    if isinstance(policy, SlurmPolicy):
        return _slurm_knobs(policy)
    return _accelerator_knobs(policy)


class WhatIfForm(forms.Form):
    """A what-if of `cluster`: the replay's window (whole days, UTC, both included), pool,
    order and discipline, and the variant as the settings that differ from `policy` now
    (each field changed, then the lines typed). Every setting is checked against the policy
    as the replay will apply it, and a share as the share edit form checks it."""

    title = forms.CharField(
        max_length=200, required=False, help_text="To find it again; the list shows its settings."
    )
    cores = forms.IntegerField(
        min_value=1,
        max_value=MAX_CORES,
        required=False,
        help_text="The pool the jobs are placed on.",
    )
    order = forms.ChoiceField(
        choices=[
            ("policy", "the cluster's policy"),
            ("fifo", "first come, first served (submit order)"),
        ],
        help_text="How waiting jobs are ordered, on both sides.",
    )
    backfill = forms.ChoiceField(
        required=False,
        help_text="Which jobs may start ahead of blocked ones, on both sides (a variant's"
        " backfill_depth changes its own).",
    )
    more_settings = forms.CharField(
        required=False,
        label="Other settings",
        max_length=MAX_TYPED,
        widget=forms.Textarea(attrs={"rows": 4, "cols": 60}),
    )

    def __init__(
        self,
        data: Any = None,
        *,
        cluster: Cluster,
        policy: Policy,
        days: tuple[date | None, date | None] = (None, None),
        asked: Sequence[str] = (),
    ) -> None:
        super().__init__(data, initial={"cores": cluster.cores, "order": "policy"}, label_suffix="")
        self.cluster = cluster
        self.policy = policy
        self.settings: list[str] = []
        replay = dict(self.fields)
        self.fields = {"title": replay.pop("title")}
        for name, day in zip(("from", "until"), days, strict=True):
            self.fields[name] = forms.DateField(
                required=False,
                input_formats=["%Y-%m-%d"],
                widget=forms.DateInput(attrs={"type": "date"}, format="%Y-%m-%d"),
                label=f"Jobs submitted {name}",
                help_text="A day (UTC), included; empty: "
                + ("the first job stored." if name == "from" else "the last job stored."),
                error_messages={"invalid": f"{name} must be a date, such as 2026-11-21."},
            )
            self.initial[name] = day
        self.fields.update(replay)
        own = backfill_said(default_backfill(policy))
        backfill = self.fields["backfill"]
        assert isinstance(backfill, forms.ChoiceField)
        backfill.choices = [
            ("", f"the cluster's own ({own})"),
            ("none", "none: in order, stop at the first job that does not fit"),
            ("greedy", "greedy: every job that fits starts"),
            ("easy", "EASY: the first blocked job gets a reservation"),
            *((str(depth), f"{depth} reservations") for depth in DEPTHS_OFFERED),
        ]
        if cluster.cores is None:
            self.fields["cores"].help_text += " The cluster's cores are not set: give them here."
        else:
            self.fields["cores"].help_text += f" The cluster's: {cluster.cores:,}."
        more = self.fields.pop("more_settings")
        self.knobs = policy_knobs(policy)
        shares = _share_knobs(policy)
        self.shares = shares[:MAX_SHARE_FIELDS]
        self.shares_left_out = len(shares) - len(self.shares)
        for knob in (*self.knobs, *self.shares):
            self.fields[knob.name] = knob.field
            self.initial[knob.name] = knob.now
        self.fields["more_settings"] = more
        self.initial["more_settings"] = "\n".join(self._prefilled(asked))

    def _prefilled(self, asked: Sequence[str]) -> list[str]:
        """The settings asked for in the address (`?set=shares:NAME=N`) put in their fields;
        those that have none, or whose value the field does not take, as lines."""
        knobs = {knob.key: knob for knob in (*self.knobs, *self.shares)}
        lines = []
        for text in asked:
            key, _, value = text.partition("=")
            knob = knobs.get(key.strip())
            try:
                if knob is None:
                    raise forms.ValidationError("no field")
                if isinstance(knob.field, forms.BooleanField) and value.strip() not in _SWITCHES:
                    raise forms.ValidationError("a checkbox would take any word for true")
                self.initial[knob.name] = knob.field.clean(value.strip())
            except forms.ValidationError:
                lines.append(text.strip())
        return lines

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        since, until = data.get("from"), data.get("until")
        if since and until and until < since:
            self.add_error("until", f"until ({until}) is before from ({since}).")
        if data.get("cores") is None and self.cluster.cores is None and "cores" not in self.errors:
            self.add_error(
                "cores",
                "how many cores the jobs ran on is not known: give them here, or set the"
                " cluster's cores on its settings page.",
            )
        self.settings = self._settings(data)
        return data

    def _settings(self, data: dict[str, Any]) -> list[str]:
        made: list[tuple[str, str]] = []  # (the field it came from, KEY=VALUE)
        for knob in (*self.knobs, *self.shares):
            value = data.get(knob.name)
            if knob.name not in self.errors and knob.changed(value):
                made.append((knob.name, f"{knob.key}={knob.written(value)}"))
        lines = [line.strip() for line in data.get("more_settings", "").splitlines()]
        lines = [line for line in lines if line]
        if len(lines) > MAX_SETTINGS:
            self.add_error("more_settings", f"at most {MAX_SETTINGS} settings.")
            return []
        for line in lines:
            problem = _share_problem(line)
            if problem:
                self.add_error("more_settings", problem)
            elif len(line) > MAX_SETTING:
                self.add_error("more_settings", f"a setting has at most {MAX_SETTING} characters.")
            else:
                made.append(("more_settings", line))
        changed: Policy | None = self.policy
        for field, text in made:
            try:
                changed = apply_settings(changed, [text]).policy
            except SettingError as error:
                self.add_error(field, str(error))
        return [text for _, text in made]

    def parameters(self) -> WhatIfParameters:
        """The what-if asked for (a valid form's)."""
        data = self.cleaned_data
        since, until = data.get("from"), data.get("until")
        return WhatIfParameters(
            order=data["order"],
            backfill=parse_backfill(data["backfill"]) if data.get("backfill") else None,
            since=None if since is None else datetime.combine(since, time(), UTC),
            until=None if until is None else datetime.combine(until + timedelta(1), time(), UTC),
            cores=data["cores"],
            settings=tuple(self.settings),
        )


def _share_problem(line: str) -> str:
    """Why a `shares:NAME=N` line is refused as the share forms refuse shares; "" if it is not
    refused (or is no share)."""
    key, sep, value = line.partition("=")
    if not key.strip().startswith("shares:") or not sep:
        return ""
    try:
        _share_field(key).clean(value.strip())
    except forms.ValidationError as invalid:
        return f"{key.strip()}: shares are a whole number, 0 or more. {' '.join(invalid.messages)}"
    if not value.strip():
        return f"{key.strip()}: shares are a whole number, 0 or more."
    return ""
