"""The stored password and token hashes: OWASP's scrypt cost unless ``$ARENA_SCRYPT_N`` (set by
``tests/conftest.py`` for the whole suite, so its sign-ins stay cheap) lowers N; a hash checks
under whatever N it was made with."""

from __future__ import annotations

import pytest

from bot_arena.arena.api import passwords


def _params(stored: str) -> tuple[int, int, int]:
    prefix, n, r, p, _salt, _digest = stored.split("$")
    assert prefix == "scrypt"
    return int(n), int(r), int(p)


def test_without_the_variable_a_hash_costs_owasps_n_r_p(monkeypatch: pytest.MonkeyPatch) -> None:
    """What every real install makes (the suite itself runs with the variable set)."""
    monkeypatch.delenv(passwords.COST_ENV, raising=False)
    assert passwords.cost() == 2**14
    stored = passwords.hash_secret("correct horse battery")
    assert _params(stored) == (2**14, 8, 5)
    assert passwords.check_secret(stored, "correct horse battery")
    assert not passwords.check_secret(stored, "correct horse battery!")


def test_the_variable_lowers_n_and_the_hash_checks_without_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(passwords.COST_ENV, "16")
    stored = passwords.hash_secret("s3cret-enough")
    assert _params(stored) == (16, 8, 5)
    monkeypatch.delenv(passwords.COST_ENV)
    assert passwords.check_secret(stored, "s3cret-enough")
    assert not passwords.check_secret(stored, "s3cret-enougH")


@pytest.mark.parametrize("value", ["1", "3", "1000", str(2**15), "-4", "x", "2**10", "1e3"])
def test_a_cost_that_is_no_power_of_two_up_to_the_default_is_refused(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    """Never above the default (the variable may only make hashing cheaper), and never a value
    scrypt would refuse with a message that does not name the variable."""
    monkeypatch.setenv(passwords.COST_ENV, value)
    with pytest.raises(ValueError, match=r"\$ARENA_SCRYPT_N: .* is not a power of two"):
        passwords.hash_secret("anything")
