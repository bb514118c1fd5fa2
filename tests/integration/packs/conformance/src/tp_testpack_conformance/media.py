"""The smallest PNG and WAV the suite's scenarios accept."""

from __future__ import annotations

import base64
import struct

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)
"""A 1x1 red pixel."""


def _wav() -> bytes:
    samples = b"\x00\x00" * 8
    header = b"RIFF" + struct.pack("<I", 36 + len(samples)) + b"WAVE"
    fmt = b"fmt " + struct.pack("<IHHIIHH", 16, 1, 1, 8000, 16000, 2, 16)
    return header + fmt + b"data" + struct.pack("<I", len(samples)) + samples


WAV = _wav()
"""Eight samples of silence."""
