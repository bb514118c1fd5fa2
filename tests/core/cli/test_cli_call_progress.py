"""``toolpalette call`` draws a tool's progress as a bar on a terminal, and only there."""

from __future__ import annotations

import io
import sys

import pytest
import toolpalette
from toolpalette import ToolContext, ToolHub
from toolpalette.testing import plugin_of, run_cli


@toolpalette.tool(read_only=True)
def crawl(pages: int, ctx: ToolContext) -> str:
    """Crawl some pages, reporting each one."""
    for done in range(1, pages + 1):
        ctx.report_progress(done, pages, f"page {done}")
    ctx.report_progress(pages + 1)  # a report without a total
    return f"crawled {pages}"


@toolpalette.tool(read_only=True)
def sneaky(ctx: ToolContext) -> str:
    """Report progress with a message that would drive the terminal."""
    ctx.report_progress(1, 2, "page\x1b]0;owned\x07 one\x9b2J")
    ctx.report_progress(float("nan"), 2, "not drawn")
    return "done"


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def hub() -> ToolHub:
    built = ToolHub(autoload=False)
    built.add_plugin(plugin_of(crawl, sneaky), name="crawler")
    return built


def test_progress_is_drawn_on_a_terminal_and_cleared_before_the_result(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    status = run_cli(["call", "crawl", "--input", '{"pages": 4}'], hub=hub())
    assert status == 0
    drawn = terminal.getvalue()
    assert "[######..................] 1/4 page 1" in drawn
    assert "[########################] 4/4 page 4" in drawn
    assert "[????????????????????????] 5" in drawn
    assert drawn.endswith("\r\x1b[K")  # the bar is gone before the result is printed
    assert capsys.readouterr().out == "crawled 4\n"


def test_no_bar_when_stderr_is_not_a_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(["call", "crawl", "--input", '{"pages": 2}'], hub=hub()) == 0
    captured = capsys.readouterr()
    assert captured.out == "crawled 2\n"
    assert "#" not in captured.err


def test_a_message_cannot_drive_the_terminal(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert run_cli(["call", "sneaky"], hub=hub()) == 0
    drawn = terminal.getvalue()
    assert "[############............] 1/2 page ]0;owned one 2J" in drawn
    assert "\x07" not in drawn
    assert "\x9b" not in drawn
    assert drawn.count("\x1b") == 2  # the bar's own: clear the line, twice (draw, then clear)
    assert "not drawn" not in drawn
    assert capsys.readouterr().out == "done\n"
