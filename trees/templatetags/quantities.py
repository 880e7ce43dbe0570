"""The pages' filters for trees/quantities.py: `{{ node.fairshare_perc|target_percent:slurm }}`,
`{{ node.usage|usage:unit }}`, `{{ node.usage|usage_number }}`, `{{ node.fairshare_factor|fixed }}`,
`{{ cluster.decay_interval|span }}`."""

from __future__ import annotations

from datetime import datetime, timedelta

from django import template
from django.utils import timezone

from trees.quantities import (
    UsageUnit,
    fixed,
    fs_percent_text,
    fs_points_text,
    larger_unit_number,
    mean_percent,
    part_percent,
    percent_text,
    points_text,
    span_text,
    usage_number,
    usage_text,
    wait_text,
)

register = template.Library()


@register.filter
def target_percent(fraction: float | None, slurm: bool = False) -> str:
    return percent_text(fraction, slurm=bool(slurm))


@register.filter
def share_percent(fraction: float | None) -> str:
    """A share the dashboard computes itself (of usage, as a double) as a percent."""
    return percent_text(fraction, slurm=True)


@register.filter
def usage(value: float | None, unit: UsageUnit) -> str:
    return usage_text(value, unit)


register.filter("usage_number", usage_number)
register.filter("span", span_text)
register.filter("larger_unit", larger_unit_number)
register.filter("mean_percent", mean_percent)
register.filter("points", points_text)


@register.filter("part_percent")
def part_percent_filter(fraction: float | None, digits: int = 1) -> str:
    """`{{ entity.lost_fraction|part_percent }}`: `4.3 %` (`|part_percent:2`: `32.75 %`)."""
    return "" if fraction is None else part_percent(fraction, int(digits))


@register.filter("fixed")
def fixed_filter(value: float | None, digits: int = 6) -> str:
    """`{{ node.fairshare_factor|fixed }}`: "%f" as the schedulers print it (`|fixed:1`)."""
    return fixed(value, int(digits))


@register.filter
def seconds(count: int | None) -> str:
    """`{{ job.requested_walltime|seconds }}`: a number of seconds as a span, `4 hours`."""
    return "" if count is None else span_text(timedelta(seconds=count))


@register.filter
def clock(moment: datetime | None, day: datetime | None = None) -> str:
    """`{{ job.last_cycle|clock:job.end }}`: a time of day, `20:18:56`, in the site's time
    zone, with its date before it when it is not on the day of `day`; "" for no time."""
    if moment is None:
        return ""
    here = timezone.localtime(moment)
    if day is not None and timezone.localtime(day).date() == here.date():
        return f"{here:%H:%M:%S}"
    return f"{here:%Y-%m-%d %H:%M:%S}"


@register.filter
def waited(since: datetime | None, now: datetime) -> str:
    """`{{ job.qtime|waited:now }}`: how long a job has waited since it was queued."""
    return "" if since is None else wait_text(now - since)


register.filter("fs_percent", fs_percent_text)
register.filter("fs_points", fs_points_text)
