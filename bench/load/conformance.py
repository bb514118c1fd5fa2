"""The official MCP conformance suite's server scenarios against ``toolpalette serve --http``.

``python -m bench.load.conformance --node NODE --suite PATH`` (what ``nox -s conformance``
runs, after installing ``@modelcontextprotocol/conformance`` from npm) starts
``toolpalette serve --http`` twice on 127.0.0.1 with a free port, every installed tool
and skill served (``TOOLPALETTE_FILES_ROOT`` at a scratch folder): with ``--workers 2``
(stateless) and with one worker (stateful); it runs every server scenario of the suite
(``--suite all``) against each, and prints pass or fail per scenario and server.

Most scenarios call tools, prompts or resources by the names the suite's own test
server has (``test_simple_text``, ``test://static-text``...): those need a fixture we do
not serve, and are listed as out of scope with the name they need. Every other
scenario must pass against both servers; the exit status is 1 when one does not. A
scenario passes when none of its checks fails; a warning is shown beside it (with no
session, as stateless serving has, the SSE stream scenarios warn and run no check).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.load.servers import Server, serve_command

FIXTURES: dict[str, str] = {
    "completion-complete": "prompt `test_prompt_with_arguments` with an argument to complete",
    "tools-call-simple-text": "tool `test_simple_text`",
    "tools-call-image": "tool `test_image_content`",
    "tools-call-audio": "tool `test_audio_content`",
    "tools-call-embedded-resource": "tool `test_embedded_resource`",
    "tools-call-mixed-content": "tool `test_multiple_content_types`",
    "tools-call-with-logging": "tool `test_tool_with_logging`",
    "tools-call-error": "tool `test_error_handling`",
    "tools-call-with-progress": "tool `test_tool_with_progress`",
    "tools-call-sampling": "tool `test_sampling` (and sampling from the server)",
    "tools-call-elicitation": "tool `test_elicitation` (and elicitation from the server)",
    "json-schema-2020-12": "tool `json_schema_2020_12_tool`",
    "elicitation-sep1034-defaults": "tool `test_elicitation_sep1034_defaults`",
    "elicitation-sep1330-enums": "tool `test_elicitation_sep1330_enums`",
    "server-sse-polling": "tool `test_reconnection` (closes its stream mid-call)",
    "resources-read-text": "resource `test://static-text`",
    "resources-read-binary": "resource `test://static-binary`",
    "resources-templates-read": "resource template `test://template/{id}/data`",
    "resources-subscribe": "resource `test://watched-resource`, and subscriptions",
    "resources-unsubscribe": "resource `test://watched-resource`, and subscriptions",
    "prompts-get-simple": "prompt `test_simple_prompt`",
    "prompts-get-with-args": "prompt `test_prompt_with_arguments`",
    "prompts-get-embedded-resource": "prompt `test_prompt_with_embedded_resource`",
    "prompts-get-with-image": "prompt `test_prompt_with_image`",
}
"""The scenarios that need something of the suite's own test server, and what."""

CONFIGURATIONS: dict[str, tuple[str, ...]] = {
    "2 workers (stateless)": ("--workers", "2"),
    "1 worker (stateful)": (),
}
_RESULT_FOLDER = re.compile(r"^server-(.+)-\d{4}-\d\d-\d\dT[\d-]+Z$")


def scenarios(node: str, suite: str) -> list[str]:
    """The suite's server scenarios, in its own order."""
    listed = subprocess.run(
        [node, suite, "list", "--server"], capture_output=True, text=True, check=True, timeout=120
    ).stdout
    return re.findall(r"^\s+- (\S+)", listed, flags=re.MULTILINE)


def run_suite(node: str, suite: str, url: str, out: Path) -> dict[str, tuple[str, str]]:
    """Run every server scenario against ``url``: scenario -> (outcome, detail)."""
    subprocess.run(
        [node, suite, "server", "--url", url, "--suite", "all", "-o", str(out)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
        timeout=900,
    )
    results: dict[str, tuple[str, str]] = {}
    for folder in sorted(out.iterdir()):
        found = _RESULT_FOLDER.match(folder.name)
        checks_file = folder / "checks.json"
        if found is None or not checks_file.exists():
            continue
        checks = json.loads(checks_file.read_text())
        failed = [c for c in checks if c.get("status") == "FAILURE"]
        warned = [c for c in checks if c.get("status") == "WARNING"]
        passed = sum(c.get("status") == "SUCCESS" for c in checks)
        if failed:
            detail = "; ".join((c.get("errorMessage") or c["id"])[:120] for c in failed)
            results[found.group(1)] = ("FAIL", detail)
        elif warned:
            detail = "warned: " + "; ".join(c["id"] for c in warned)
            shown = "no check ran" if not passed else f"pass ({passed} checks)"
            results[found.group(1)] = (shown, detail)
        else:
            results[found.group(1)] = (f"pass ({passed} checks)", "")
    return results


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.load.conformance")
    parser.add_argument("--node", required=True, help="a Node.js 22 or newer")
    parser.add_argument("--suite", required=True, help="the suite's dist/index.js")
    args = parser.parse_args(argv)
    names = scenarios(args.node, args.suite)
    root = Path(tempfile.mkdtemp(prefix="tpconformance-"))
    (root / "workspace").mkdir()
    (root / "workspace" / "notes.txt").write_text("A file to serve.\n")
    env = {"TOOLPALETTE_FILES_ROOT": str(root / "workspace")}
    outcomes: dict[str, dict[str, tuple[str, str]]] = {}
    for label, options in CONFIGURATIONS.items():
        server = Server(label, serve_command(*options), env)
        try:
            server.wait_ready()
            print(f"{label}: {server.url} ({server.mode})", flush=True)
            out = root / re.sub(r"\W+", "-", label)
            outcomes[label] = run_suite(args.node, args.suite, server.url, out)
        finally:
            server.stop()
    print(f"\n@modelcontextprotocol/conformance, {len(names)} server scenarios (--suite all).\n")
    print("| scenario | " + " | ".join(CONFIGURATIONS) + " | fixture it needs |")
    print("|---|" + "---|" * len(CONFIGURATIONS) + "---|")
    required_failures = []
    for name in names:
        cells = []
        for label in CONFIGURATIONS:
            outcome, detail = outcomes[label].get(name, ("FAIL", "no result"))
            cells.append(outcome if not detail else f"{outcome}: {detail}")
            if name not in FIXTURES and outcome == "FAIL":
                required_failures.append(f"{name} ({label})")
        needs = FIXTURES.get(name, "none: must pass")
        print(f"| {name} | " + " | ".join(cells) + f" | {needs} |")
    unknown = sorted(set(FIXTURES) - set(names))
    if unknown:
        print(f"\n(listed as needing a fixture, but not in this suite: {', '.join(unknown)})")
    print(f"\nResults under {root}")
    if required_failures:
        print("\nFAILED without a fixture to blame: " + ", ".join(required_failures))
        return 1
    print("\nEvery scenario that needs no fixture passed against both servers.")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
