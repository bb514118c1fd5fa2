"""What prompts, resources and a tool's talking context cost a plain tool call.

`bench_before`'s micro-benchmark against the main of before they were merged.
"""

from __future__ import annotations

import sys

from bench.bench_before import compare

BEFORE_CONTENT = "34d357c"
"""Main just before the merge of `@prompt`, `@resource` and `ToolContext.log`."""
MERGED = "83db0b1"
"""That merge: against it, the features alone (main has moved on since)."""


def main(argv: list[str]) -> None:
    # The same trivial async tool, no context: what every plain call pays for the features.
    compare(
        BEFORE_CONTENT,
        "before prompts, resources and the context",
        "plain call overhead vs before prompts/resources/context (best rounds)",
    )
    compare(
        BEFORE_CONTENT,
        "before prompts, resources and the context",
        "plain call overhead at their merge vs before it (best rounds)",
        after_commit=MERGED,
    )


if __name__ == "__main__":
    main(sys.argv[1:])
