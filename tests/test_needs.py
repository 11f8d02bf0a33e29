"""The one skip-or-fail rule: a missing thing skips its tests, unless CI requires it."""

from __future__ import annotations

import pytest

from tests import needs

ENV = "ARENA_EXAMPLE_REQUIRED"


@pytest.mark.parametrize("value", [None, "", "0"])
def test_a_missing_thing_skips_where_nobody_requires_it(
    value: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    if value is None:
        monkeypatch.delenv(ENV, raising=False)
    else:
        monkeypatch.setenv(ENV, value)
    assert not needs.required(ENV)
    with pytest.raises(pytest.skip.Exception, match="the example is missing"):
        needs.missing(ENV, "the example is missing")
    mark = needs.skip_unless(False, ENV, "the example is missing")
    assert mark.name == "skipif" and mark.args == (True,)


@pytest.mark.parametrize("value", ["1", "yes"])
def test_a_missing_thing_fails_where_ci_requires_it(
    value: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV, value)
    assert needs.required(ENV)
    stopped = (pytest.fail.Exception, pytest.skip.Exception)  # a skip here is the bug
    with pytest.raises(stopped) as caught:
        needs.missing(ENV, "the example is missing")
    assert caught.type is pytest.fail.Exception
    assert str(caught.value) == f"the example is missing ({ENV} is set)"
    with pytest.raises(stopped) as caught:
        needs.skip_unless(False, ENV, "the example is missing")
    assert caught.type is pytest.fail.Exception


def test_a_present_thing_runs_whatever_is_required(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV, "1")
    mark = needs.skip_unless(True, ENV, "the example is missing")
    assert mark.args == (False,)
