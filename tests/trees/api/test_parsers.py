import json
from typing import Any

import pytest
from django.test import Client

from tests.cast import login
from tests.trees.api.test_edits import L5_GETS_30, URL, nothing_saved, version

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("samples")]


def test_a_json_body_past_api_max_body_bytes_is_a_413_and_changes_nothing(
    client: Client, settings: Any
) -> None:
    login(client, "alice", staff=True)
    settings.API_MAX_BODY_BYTES = 1000
    before = version()
    padded = json.dumps({"edits": [L5_GETS_30], "reason": "x" * 2000})
    answer = client.post(URL, padded, content_type="application/json", headers={"If-Match": before})
    assert answer.status_code == 413
    assert answer.json()["detail"] == "the body is over 1,000 bytes (API_MAX_BODY_BYTES)"
    nothing_saved(before)


def test_a_json_body_within_the_bound_is_read_as_before(client: Client, settings: Any) -> None:
    login(client, "alice", staff=True)
    body = json.dumps({"edits": [L5_GETS_30]})
    settings.API_MAX_BODY_BYTES = len(body)
    answer = client.post(URL + "?dry_run=1", body, content_type="application/json")
    assert (answer.status_code, answer.json()["dry_run"]) == (200, True)
    bad = client.post(URL + "?dry_run=1", "{", content_type="application/json")
    assert bad.status_code == 400
