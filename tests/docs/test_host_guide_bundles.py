"""The host guide's bundles page: its example runs and prints what its comments say."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "host-guide" / "bundles.md"


def test_the_example_prints_what_its_comments_say(tmp_path: Path) -> None:
    text = GUIDE.read_text(encoding="utf-8")
    [example] = re.findall(r"^```python\n(.*?)^```", text, re.MULTILINE | re.DOTALL)
    script = tmp_path / "bundles_example.py"
    script.write_text(example, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    expected = []
    for line in example.splitlines():
        if line.startswith("print(") and "  # " in line:
            expected.append(line.split("  # ", 1)[1].split(":")[0].strip())
        elif line.startswith("# ['"):
            expected.append(line[2:].split(":")[0].strip())
    printed = [line.strip() for line in done.stdout.splitlines()]
    assert printed == expected


def test_the_host_guide_links_the_page() -> None:
    thinkers = GUIDE.with_name("thinkers.md").read_text(encoding="utf-8")
    assert "(bundles.md)" in thinkers
