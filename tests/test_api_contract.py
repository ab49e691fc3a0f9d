"""Contract tests: schemathesis generates requests for every operation of the app's OpenAPI document
(authenticated), and checks each answer — no 500, a documented status, a documented content type, a body that
matches its schema."""

from __future__ import annotations

import pytest

from tests.fixtures import api as api_fixtures
from tests.fixtures.api import Api

sqlite_api = api_fixtures.sqlite_api  # the fixture

#: operations whose schema-valid input can still be refused for its content (a file that is not a law or not a
#: review spreadsheet)
CONTENT_CHECKED = {"POST /api/v1/laws", "POST /api/v1/audits/batch", "POST /api/v1/links/import"}
#: examples per operation (the default run stays quick; the property is the same at 100)
EXAMPLES = 6


@pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::pytest.PytestUnraisableExceptionWarning")
def test_every_operation_meets_its_contract(sqlite_api: Api) -> None:
    api = sqlite_api
    schemathesis = pytest.importorskip("schemathesis")
    from hypothesis import HealthCheck, given, settings
    from schemathesis.specs.openapi.checks import positive_data_acceptance

    headers = api.headers("admin")
    schema = schemathesis.openapi.from_asgi("/api/v1/openapi.json", api.client.app, headers=headers)
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) == 31  # every route of tests/test_api_auth.py but /health
    tested = []
    for operation in operations:

        @settings(
            max_examples=EXAMPLES,
            deadline=None,
            database=None,
            derandomize=True,
            suppress_health_check=list(HealthCheck),
        )
        @given(case=operation.as_strategy())
        def check(case: object) -> None:
            # a schema-valid law file may still not be a law (422), a part of a batch may have no usable file name:
            # what a file holds is beyond a schema
            excluded = [positive_data_acceptance] if case.operation.label in CONTENT_CHECKED else []
            case.call_and_validate(headers=headers, excluded_checks=excluded)  # type: ignore[attr-defined]

        check()
        tested.append(operation.label)
    assert api.dispatcher.wait(120)
    assert len(tested) == len(operations)
