"""read_file: bounded chunks, offsets, decoding, binary refusal."""

from __future__ import annotations

import pytest
from toolpalette import InvalidInputError, ToolError
from toolpalette_files import tools


def test_small_file_in_one_chunk(workspace, call):
    (workspace / "a.txt").write_text("line 1\nline 2\n")
    chunk = call(tools.read_file, path="a.txt")
    assert chunk.content == "line 1\nline 2\n"
    assert (chunk.offset, chunk.length, chunk.size, chunk.next_offset) == (0, 14, 14, None)
    assert chunk.path == "a.txt"


def test_large_file_read_in_chunks_by_offset(workspace, call):
    data = "".join(f"{i:06d}\n" for i in range(50_000))  # 350,000 bytes
    (workspace / "big.txt").write_text(data)
    first = call(tools.read_file, path="big.txt")
    assert first.length == tools.DEFAULT_CHUNK
    assert first.size == len(data)
    assert first.next_offset == tools.DEFAULT_CHUNK
    pieces, offset = [first.content], first.next_offset
    while offset is not None:
        chunk = call(tools.read_file, path="big.txt", offset=offset, limit=100_000)
        assert chunk.offset == offset
        assert chunk.length <= 100_000
        pieces.append(chunk.content)
        offset = chunk.next_offset
    assert "".join(pieces) == data


def test_chunks_never_split_a_character(workspace, call):
    text = "é€😀" * 1000
    (workspace / "u.txt").write_text(text, encoding="utf-8")
    pieces, offset = [], 0
    while offset is not None:
        chunk = call(tools.read_file, path="u.txt", offset=offset, limit=10)
        assert "\ufffd" not in chunk.content
        pieces.append(chunk.content)
        offset = chunk.next_offset
    assert "".join(pieces) == text


def test_offset_past_the_end_returns_nothing(workspace, call):
    (workspace / "a.txt").write_text("abc")
    chunk = call(tools.read_file, path="a.txt", offset=10)
    assert (chunk.content, chunk.offset, chunk.length, chunk.next_offset) == ("", 3, 0, None)


def test_limit_is_bounded_by_the_schema(workspace, call):
    (workspace / "a.txt").write_text("abc")
    with pytest.raises(InvalidInputError):
        call(tools.read_file, path="a.txt", limit=tools.MAX_CHUNK + 1)
    with pytest.raises(InvalidInputError):
        call(tools.read_file, path="a.txt", offset=-1)


def test_invalid_utf8_is_replaced(workspace, call):
    (workspace / "latin1.txt").write_bytes("café".encode("latin-1"))
    assert call(tools.read_file, path="latin1.txt").content == "caf\ufffd"


def test_binary_file_is_refused(workspace, call):
    (workspace / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    with pytest.raises(ToolError) as info:
        call(tools.read_file, path="img.png")
    assert (info.value.code, info.value.status) == ("binary_file", 415)


def test_nul_later_in_the_chunk_is_refused(workspace, call):
    (workspace / "late.bin").write_bytes(b"a" * 10_000 + b"\x00")
    with pytest.raises(ToolError) as info:
        call(tools.read_file, path="late.bin")
    assert info.value.code == "binary_file"


def test_missing_file_and_directory(workspace, call):
    (workspace / "d").mkdir()
    with pytest.raises(ToolError) as info:
        call(tools.read_file, path="nope.txt")
    assert (info.value.code, info.value.status) == ("not_found", 404)
    with pytest.raises(ToolError) as info:
        call(tools.read_file, path="d")
    assert info.value.code == "is_directory"
    with pytest.raises(ToolError) as info:
        call(tools.read_file, path=".")
    assert info.value.code == "is_directory"


def test_symlink_inside_the_workspace_is_followed(workspace, call):
    (workspace / "real.txt").write_text("real")
    (workspace / "link.txt").symlink_to("real.txt")
    assert call(tools.read_file, path="link.txt").content == "real"
