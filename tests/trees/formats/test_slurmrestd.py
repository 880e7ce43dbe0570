"""trees.formats.slurmrestd: our sshare rows as slurmrestd's `GET /slurm/v0.0.40/shares` body.

The expected shapes are those of Slurm's data_parser/v0.0.40 (parsers.c: ASSOC_SHARES_OBJ_WRAP,
SHARES_RESP_MSG, OPENAPI_META and the *_NO_VAL dumpers), the values those assoc_mgr_get_shares
sends; the capture test checks them against a real cluster's `sshare -a -l -P`.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.trees.formats.test_sshare import SMALL, capture_or_skip, small_rows
from trees.engine.slurm import (
    INFINITE,
    INFINITE64,
    NO_VAL,
    NO_VAL64,
    USE_PARENT,
    Algorithm,
    AssociationDef,
    SlurmTree,
    compute,
)
from trees.formats.slurmrestd import (
    c_uint32,
    float64,
    float64_no_val,
    shares_response,
    uint32_no_val,
    uint64,
    uint64_no_val,
)
from trees.formats.sshare import DEFAULT_TRES, SshareRow, sshare_rows
from trees.formats.sshare_read import read_sshare

Json = dict[str, Any]

INF_NUMBER = 1.8446744073709552e19  # (double) INFINITE64: serializer/json's Infinity
UNSET = {"set": False, "infinite": False, "number": 0}
UNSET_FLOAT = {"set": False, "infinite": False, "number": 0.0}
NO_LIMIT = {"set": False, "infinite": True, "number": 0}
SHARE_KEYS = [
    "id",
    "cluster",
    "name",
    "parent",
    "partition",
    "shares_normalized",
    "shares",
    "tres",
    "effective_usage",
    "usage_normalized",
    "usage",
    "fairshare",
    "type",
]


def set_to(number: float) -> Json:
    return {"set": True, "infinite": False, "number": number}


def response(rows: list[SshareRow], algorithm: Algorithm = Algorithm.FAIR_TREE) -> Json:
    return shares_response(rows, cluster="test", tres_names=DEFAULT_TRES, algorithm=algorithm)


def share(body: Json, name: str, parent: str) -> Json:
    shares: list[Json] = body["shares"]["shares"]
    found = [s for s in shares if (s["name"], s["parent"]) == (name, parent)]
    assert len(found) == 1
    return found[0]


def tres_list(value: object) -> list[Json]:
    return [{"name": name, "value": value} for name in DEFAULT_TRES]


class TestAssociations:
    """The small Fair Tree cluster of test_sshare: rows in order root, root/root, a, a/u1,
    a/u2 (parent), b, b/u3, c, c/u1."""

    def test_a_user_row(self) -> None:
        u1 = share(response(small_rows()), "u1", "a")
        assert list(u1) == SHARE_KEYS
        assert u1 == {
            "id": 4,
            "cluster": "test",
            "name": "u1",
            "parent": "a",
            "partition": "",
            "shares_normalized": set_to(0.16666666666666666),
            "shares": set_to(1),
            "tres": {
                "run_seconds": tres_list(set_to(0)),
                "group_minutes": tres_list(NO_LIMIT),
                "usage": tres_list(None),
            },
            "effective_usage": 0.4,
            "usage_normalized": set_to(0.13333333333333333),
            "usage": 4,
            "fairshare": {"factor": 0.4, "level": 0.41666666666666663},
            "type": ["USER"],
        }
        assert list(u1["tres"]) == ["run_seconds", "group_minutes", "usage"]
        assert list(u1["fairshare"]) == ["factor", "level"]

    def test_an_account_row_has_slurmctlds_zero_factor(self) -> None:
        a = share(response(small_rows()), "a", "root")
        assert (a["id"], a["type"], a["shares"], a["usage"]) == (3, ["ASSOCIATION"], set_to(10), 10)
        assert a["shares_normalized"] == set_to(0.3225806451612903)
        assert a["effective_usage"] == 0.3333333333333333
        assert a["fairshare"] == {"factor": 0.0, "level": 0.967741935483871}

    def test_the_root_association(self) -> None:
        root = response(small_rows())["shares"]["shares"][0]
        assert (root["id"], root["name"], root["parent"], root["type"]) == (
            1,
            "root",
            "",
            ["ASSOCIATION"],
        )
        assert root["shares"] == UNSET  # RawShares NO_VAL
        assert root["usage_normalized"] == UNSET_FLOAT  # usage_norm NO_VAL
        assert (root["usage"], root["effective_usage"]) == (30, 1.0)
        assert root["fairshare"] == {"factor": 0.0, "level": float(NO_VAL)}

    def test_the_root_user(self) -> None:
        root_user = share(response(small_rows()), "root", "root")
        assert (root_user["id"], root_user["type"], root_user["shares"]) == (2, ["USER"], set_to(1))
        assert root_user["fairshare"] == {"factor": 1.0, "level": INF_NUMBER}

    def test_a_parent_user_is_use_parent_with_an_infinite_level(self) -> None:
        u2 = share(response(small_rows()), "u2", "a")
        assert u2["shares"] == set_to(USE_PARENT) == set_to(2147483647)
        assert u2["shares_normalized"] == set_to(0.3225806451612903)
        assert u2["fairshare"] == {"factor": 0.8, "level": INF_NUMBER}

    def test_a_parent_account_has_level_no_val(self) -> None:
        extra = [AssociationDef("d", "root", None, USE_PARENT), AssociationDef("d", "d", "u4", 1)]
        tree = SlurmTree.build([*SMALL, *extra])
        body = response(sshare_rows(tree, compute(tree)))
        d = share(body, "d", "root")
        assert (d["shares"], d["type"]) == (set_to(USE_PARENT), ["ASSOCIATION"])
        assert d["fairshare"] == {"factor": 0.0, "level": float(NO_VAL)}
        assert share(body, "u4", "d")["type"] == ["USER"]

    def test_an_infinite_level_fs_is_a_finite_number(self) -> None:
        body = response(small_rows())
        assert share(body, "b", "a")["fairshare"] == {"factor": 0.0, "level": INF_NUMBER}
        assert share(body, "u3", "b")["fairshare"] == {"factor": 0.8, "level": INF_NUMBER}
        text = json.dumps(body, allow_nan=False)
        assert "Infinity" not in text
        assert '"level": 1.8446744073709552e+19' in text

    def test_classic_sends_factor_and_level_zero_even_where_sshare_prints_them(self) -> None:
        rows = small_rows(Algorithm.CLASSIC)
        assert rows[2].fairshare == pytest.approx(0.48858, abs=1e-6)  # sshare's own FairShare
        body = response(rows, Algorithm.CLASSIC)
        a = share(body, "a", "root")
        assert a["fairshare"] == {"factor": 0.0, "level": 0.0}
        assert a["effective_usage"] == 0.3333333333333333
        u1 = share(body, "u1", "a")
        assert u1["fairshare"] == {"factor": 0.0, "level": 0.0}
        assert u1["shares_normalized"] == set_to(0.05376344086021505)
        assert u1["effective_usage"] == 0.16666666666666666
        root = body["shares"]["shares"][0]
        assert (root["shares"], root["shares_normalized"]) == (UNSET, set_to(1.0))


class TestTres:
    NAMES = ("cpu", "mem", "billing", "gres/gpu")

    def body(self) -> Json:
        tree = SlurmTree.build(SMALL)
        rows = sshare_rows(
            tree,
            compute(tree),
            grp_tres_mins={("a", "u1"): "cpu=1000,billing=50", ("c", "u1"): "cpu=10,mem=2+"},
            tres_run_mins={("a", "u1"): "cpu=3,mem=2048", ("c", "u1"): "cpu=0,mem=0,b+"},
            tres_names=self.NAMES,
        )
        return shares_response(
            rows, cluster="test", tres_names=self.NAMES, algorithm=Algorithm.FAIR_TREE
        )

    def values(self, entries: list[Json]) -> list[object]:
        assert [entry["name"] for entry in entries] == list(self.NAMES)
        return [entry["value"] for entry in entries]

    def test_run_minutes_become_seconds_and_a_missing_tres_is_unknown(self) -> None:
        tres = share(self.body(), "u1", "a")["tres"]
        assert self.values(tres["run_seconds"]) == [set_to(180), set_to(122880), UNSET, UNSET]

    def test_group_minutes_without_a_limit_are_infinite(self) -> None:
        tres = share(self.body(), "u1", "a")["tres"]
        assert self.values(tres["group_minutes"]) == [set_to(1000), NO_LIMIT, set_to(50), NO_LIMIT]
        assert self.values(share(self.body(), "a", "root")["tres"]["group_minutes"]) == [
            NO_LIMIT
        ] * len(self.NAMES)

    def test_a_cut_text_leaves_the_tres_after_the_cut_unknown(self) -> None:
        tres = share(self.body(), "u1", "c")["tres"]
        assert self.values(tres["run_seconds"]) == [set_to(0), set_to(0), UNSET, UNSET]
        assert self.values(tres["group_minutes"]) == [set_to(10), UNSET, UNSET, UNSET]

    def test_usage_per_tres_is_null(self) -> None:
        assert self.values(share(self.body(), "u1", "a")["tres"]["usage"]) == [None] * 4


class TestEnvelope:
    def test_keys_total_shares_meta_errors_warnings(self) -> None:
        body = shares_response(
            small_rows(),
            cluster="test",
            tres_names=DEFAULT_TRES,
            algorithm=Algorithm.FAIR_TREE,
            client_source="[dashboard]:443",
        )
        assert list(body) == ["shares", "meta", "errors", "warnings"]
        assert list(body["shares"]) == ["shares", "total_shares"]
        assert body["shares"]["total_shares"] == 0  # slurmctld never fills tot_shares
        assert [s["id"] for s in body["shares"]["shares"]] == list(range(1, 10))
        assert {s["cluster"] for s in body["shares"]["shares"]} == {"test"}
        assert body["meta"] == {
            "plugin": {
                "type": "",
                "name": "fairshare-dashboard",
                "data_parser": "data_parser/v0.0.40",
                "accounting_storage": "",
            },
            "client": {"source": "[dashboard]:443", "user": "", "group": ""},
            "command": [],
            "slurm": {
                "version": {"major": "", "micro": "", "minor": ""},
                "release": "",
                "cluster": "test",
            },
        }
        assert (body["errors"], body["warnings"]) == ([], [])

    def test_no_rows(self) -> None:
        assert response([])["shares"] == {"shares": [], "total_shares": 0}

    @pytest.mark.parametrize("algorithm", list(Algorithm))
    def test_the_body_is_strict_json(self, algorithm: Algorithm) -> None:
        body = response(small_rows(algorithm), algorithm)
        assert json.loads(json.dumps(body, allow_nan=False)) == body


class TestNumbers:
    @pytest.mark.parametrize(
        ("value", "flag"),
        [
            (0.5, 0),
            (4294967294.0, NO_VAL),
            (4294967295.5, INFINITE),
            (-1.0, INFINITE),  # the 64-bit truncation's low 32 bits
            (2.0**32 + 3, 3),
            (float(NO_VAL64), 0),
            (float("inf"), 0),
            (float("nan"), 0),
        ],
    )
    def test_c_uint32(self, value: float, flag: int) -> None:
        assert c_uint32(value) == flag

    def test_the_no_val_wrappers(self) -> None:
        assert uint32_no_val(NO_VAL) == UNSET
        assert uint32_no_val(INFINITE) == NO_LIMIT
        assert uint32_no_val(0) == set_to(0)
        assert uint64_no_val(NO_VAL64) == UNSET
        assert uint64_no_val(INFINITE64) == NO_LIMIT
        assert float64_no_val(float(NO_VAL)) == UNSET_FLOAT
        assert float64_no_val(float(INFINITE)) == {"set": False, "infinite": True, "number": 0.0}
        assert float64_no_val(float("inf"))["infinite"] is True
        assert float64_no_val(float("nan")) == UNSET_FLOAT
        assert float64_no_val(0.25) == set_to(0.25)

    def test_plain_numbers(self) -> None:
        assert (uint64(NO_VAL64), uint64(INFINITE64), uint64(7)) == (None, None, 7)
        assert (float64(float("inf")), float64(float("nan")), float64(0.5)) == (
            INF_NUMBER,
            INF_NUMBER,
            0.5,
        )


class TestCapture:
    """A real Slurm 22.05.8 Fair Tree cluster's `sshare -a -l -P`, through the rows to JSON."""

    def test_the_json_has_the_captures_numbers(self) -> None:
        parsed = read_sshare(capture_or_skip("ft_basic_sshare_l_P.txt"))
        tree = SlurmTree.build(parsed.associations)
        run = {e.association.key: e.cells["TRESRunMins"] for e in parsed.entries}
        rows = sshare_rows(tree, compute(tree), tres_run_mins=run, tres_names=parsed.tres_names)
        body = shares_response(
            rows, cluster="ft_basic", tres_names=parsed.tres_names, algorithm=Algorithm.FAIR_TREE
        )
        shares = body["shares"]["shares"]
        assert len(shares) == len(parsed.entries) == 18
        for entry, got in zip(parsed.entries, shares, strict=True):
            assert_matches(entry.cells, got)
        assert shares[0]["usage"] == 1786
        hank = share(body, "hank", "chem")
        assert hank["fairshare"] == {"factor": 0.75, "level": 4.0}
        assert share(body, "gina", "chem")["fairshare"]["level"] == 0.0
        erin = share(body, "erin", "exp")
        assert (erin["shares"], erin["fairshare"]["level"]) == (set_to(USE_PARENT), INF_NUMBER)
        assert share(body, "bio", "root")["fairshare"] == {"factor": 0.0, "level": INF_NUMBER}
        assert json.loads(json.dumps(body, allow_nan=False)) == body


def assert_matches(cells: dict[str, str], got: Json) -> None:
    """One association's JSON says what its sshare line says."""
    is_user = bool(cells["User"])
    assert got["name"] == (cells["User"] if is_user else cells["Account"].strip())
    assert got["type"] == (["USER"] if is_user else ["ASSOCIATION"])
    assert str(got["usage"]) == cells["RawUsage"]
    assert f"{got['shares_normalized']['number']:f}" == cells["NormShares"]
    assert f"{got['effective_usage']:f}" == cells["EffectvUsage"]
    raw_shares = {"": UNSET, "parent": set_to(USE_PARENT)}
    text = cells["RawShares"]
    assert got["shares"] == (raw_shares[text] if text in raw_shares else set_to(int(text)))
    norm_usage = got["usage_normalized"]
    assert (f"{norm_usage['number']:f}" if norm_usage["set"] else "") == cells["NormUsage"]
    factor, level = got["fairshare"]["factor"], got["fairshare"]["level"]
    assert (f"{factor:f}" if is_user else "") == cells["FairShare"]
    if cells["LevelFS"] == "inf":
        assert level == INF_NUMBER
    elif cells["LevelFS"]:
        assert f"{level:f}" == cells["LevelFS"]
    else:  # the root (NO_VAL) or FairShare=parent (INFINITY for a user)
        assert level == (INF_NUMBER if is_user else float(NO_VAL))
    assert [t["value"] for t in got["tres"]["run_seconds"]] == [set_to(0)] * 8
