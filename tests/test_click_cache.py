"""tests/click_cache.py: each app's click command built once, and never another app's."""

from __future__ import annotations

import pytest
import typer
import typer.main
from typer.testing import CliRunner

from tests import click_cache


def app_saying(word: str) -> typer.Typer:
    app = typer.Typer()

    @app.command()
    def say() -> None:
        print(word)

    return app


def test_each_app_is_built_once_and_answers_as_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[typer.Typer] = []
    real = typer.main.get_command

    def counting(app: typer.Typer) -> object:
        built.append(app)
        return real(app)

    monkeypatch.setattr(typer.main, "get_command", counting)
    runner = CliRunner()
    first, second = app_saying("first"), app_saying("second")
    for _ in range(3):
        assert runner.invoke(first, []).output == "first\n"
        assert runner.invoke(second, []).output == "second\n"
    assert built == [first, second]  # once each, whatever the number of invocations
    assert click_cache.click_command(first) is click_cache.click_command(first)
