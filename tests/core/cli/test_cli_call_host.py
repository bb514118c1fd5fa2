"""``toolpalette call`` as the host: failure reports with --verbose, rich content saved."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from toolpalette import File, Image, ToolHub, hookimpl, tool
from toolpalette._cli import call as _call
from toolpalette.testing import run_cli

SECRET = "sk-SECRET-41c0"
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 16


def _explode() -> None:
    raise RuntimeError(f"the database password is {SECRET}")


@tool(read_only=True)
def crash() -> str:
    """Fail with an internal error."""
    _explode()
    return "never"


@tool(read_only=True)
def picture() -> list[str | Image | File]:
    """Return a caption, an image and two files."""
    return [
        "A picture:",
        Image(PNG, mime_type="image/png"),
        File("a,b\n", name="data.csv", mime_type="text/csv"),
        File(b"\x01\x02", name="../escape.bin"[3:]),
    ]


class Pack:
    @hookimpl
    def toolpalette_register_tools(self) -> list[Any]:
        return [crash, picture]


def main(argv: list[str]) -> int:
    hub = ToolHub(autoload=False, config={})
    hub.add_plugin(Pack(), name="host")
    return run_cli(argv, hub=hub)


def test_the_model_never_sees_the_exception(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["call", "crash"]) == 1
    out, err = capsys.readouterr()
    assert err.startswith("error 500 internal_error:")
    assert SECRET not in out + err
    assert "Traceback" not in err


def test_verbose_prints_the_failure_report_with_its_traceback(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["call", "crash", "--verbose"]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    first, report = err.split("\n", 1)
    assert first.startswith("error 500 internal_error:")
    assert report.startswith("report: tool 'crash' failed with 500 internal_error after ")
    assert "Traceback (most recent call last):" in report
    assert "in _explode" in report
    assert f"RuntimeError: the database password is {SECRET}" in report


def test_verbose_reports_a_refusal_without_an_exception(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["call", "crash", "--input", "[1]", "-v"]) == 1
    err = capsys.readouterr().err
    assert "report: tool 'crash' failed with 400" in err
    assert "input: '[1]'" in err


def test_rich_content_is_summarized_without_save(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["call", "picture"]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines() == [
        "A picture:",
        f"[image: image/png, {len(PNG)} bytes]",
        "[file data.csv: text/csv, 4 bytes]",
        "a,b",  # a file of text is read, as it is, under the line naming it
        "",
        "[file escape.bin: application/octet-stream, 2 bytes]",
    ]
    assert "3 image, audio or file block(s)" in err
    assert "--save DIR" in err


def test_save_writes_each_block_to_a_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "data.csv").write_text("keep me")
    assert main(["call", "picture", "--save", str(tmp_path)]) == 0
    err = capsys.readouterr().err
    assert (tmp_path / "picture-2.png").read_bytes() == PNG
    assert (tmp_path / "data.csv").read_text() == "keep me"  # never overwritten
    assert (tmp_path / "data-2.csv").read_text() == "a,b\n"
    assert (tmp_path / "escape.bin").read_bytes() == b"\x01\x02"
    assert f"saved image to {tmp_path / 'picture-2.png'}" in err


def test_json_carries_the_blocks_as_they_are(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["call", "picture", "--json"]) == 0
    out, err = capsys.readouterr()
    content = json.loads(out)["content"]
    assert base64.b64decode(content[1]["data"]) == PNG
    assert err == ""


def test_a_block_name_cannot_leave_the_folder(tmp_path: Path) -> None:
    block = {"type": "resource", "resource": {"uri": "file:///..%2F..%2Fevil", "blob": ""}}
    name, _ = _call._block_file(block, "stem")
    assert "/" not in name
    assert not name.startswith(".")
