"""The official MCP conformance suite's server scenarios against ``toolpalette serve --http``.

``python -m bench.load.conformance --node NODE --suite PATH`` is what ``nox -s
conformance`` runs; docs/architecture.md ("The conformance suite") says what it serves
and which scenarios do not apply, and why.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.load.redis_server import redis_binary, running_redis
from bench.load.servers import Server, serve_command

PACK = "toolpalette-testpack-conformance"
"""The distribution the suite's scenarios call by name (its tools, prompts, resources)."""
SKILLJARS = ("toolpalette-skilljar-files", "toolpalette-skilljar-sql")
"""The skilljars served beside it, for the Skills extension's scenarios (SEP-2640)."""
ERAS = ("2025-11-25", "2026-07-28")
"""The protocol revisions the suite runs under (``--spec-version``)."""
CONFIGURATIONS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "1 worker": ("1 worker", "memory", ()),
    "2 workers": ("2 workers", "sqlite", ("--workers", "2")),
    "2 workers, redis": ("2 workers", "redis", ("--workers", "2", "--task-store", "{redis}")),
}
"""Each server: its workers, its task store, and its options (``{redis}``: the URL)."""
STORE_ONLY: dict[str, tuple[str, ...]] = {"2 workers, redis": ("tasks-",)}
"""The servers that run only the scenarios of these prefixes (on 2026-07-28: the store's)."""
NOT_APPLICABLE: dict[str, str] = {}
"""Scenario name prefixes that do not apply to this server, and why."""
MODERN_ONLY: dict[str, str] = {
    "tasks-": (
        "the tasks extension (SEP-2663) extends the 2026-07-28 revision (resultType, input "
        "requests, routing headers); the 2025-11-25 schema has no place for its answers"
    ),
    "sep-2640-": (
        "the suite puts the Skills extension's scenarios on no revision; forced on "
        "2025-11-25 every check skips, finding no `extensions` capability (that era's "
        "handshake has none: the server declares the extension under `experimental`)"
    ),
}
"""Scenario name prefixes that apply to the 2026-07-28 era only, and why."""
_NO_SESSION = (
    "a 2025-era server-to-client request needs a session (the client's answer comes back "
    "on another POST, to the process that asked); two workers serve stateless"
)
SESSION_ONLY: dict[str, str] = dict.fromkeys(
    (
        "tools-call-sampling",
        "tools-call-elicitation",
        "elicitation-sep1034-defaults",
        "elicitation-sep1330-enums",
    ),
    _NO_SESSION,
)
"""Scenarios that cannot apply to a 2025-era request without a session (two workers)."""
_RESULT_FOLDER = re.compile(r"^server-(.+)-\d{4}-\d\d-\d\dT[\d-]+Z$")
_LISTED = re.compile(r"^\s+- (\S+) \[([^\]]*)\]", flags=re.MULTILINE)


def scenarios(node: str, suite: str) -> dict[str, tuple[str, ...]]:
    """The suite's server scenarios, in its own order, and the revisions each runs at."""
    listed = subprocess.run(
        [node, suite, "list", "--server"], capture_output=True, text=True, check=True, timeout=120
    ).stdout
    return {m.group(1): tuple(m.group(2).split(",")) for m in _LISTED.finditer(listed)}


def not_applicable(name: str, era: str, label: str) -> str | None:
    """Why scenario ``name`` does not apply to ``era`` against server ``label``, or None."""
    if era != "2026-07-28" and label != "1 worker" and name in SESSION_ONLY:
        return SESSION_ONLY[name]
    if era != "2026-07-28":
        found = next((why for prefix, why in MODERN_ONLY.items() if name.startswith(prefix)), None)
        if found is not None:
            return found
    return next((why for prefix, why in NOT_APPLICABLE.items() if name.startswith(prefix)), None)


def run_suite(
    node: str, suite: str, url: str, era: str, out: Path, *, scenario: str | None = None
) -> dict[str, tuple[str, str]]:
    """Run every server scenario of ``era`` against ``url``: scenario -> (outcome, detail).

    With ``scenario``, that one alone, even where the suite does not place it on the
    era's timeline (an extension's scenario: ``--force``).
    """
    chosen = ["--suite", "all"] if scenario is None else ["--scenario", scenario, "--force"]
    out.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [node, suite, "server", "--url", url, *chosen, "--spec-version", era, "-o", str(out)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
        timeout=1800,
    )
    results: dict[str, tuple[str, str]] = {}
    for folder in sorted(out.iterdir()):
        found = _RESULT_FOLDER.match(folder.name)
        checks_file = folder / "checks.json"
        if found is None or not checks_file.exists():
            continue
        checks = json.loads(checks_file.read_text())
        failed = [c for c in checks if c.get("status") == "FAILURE"]
        noted = [c for c in checks if c.get("status") in ("WARNING", "SKIPPED")]
        passed = sum(c.get("status") == "SUCCESS" for c in checks)
        if failed:
            detail = "; ".join((c.get("errorMessage") or c["id"])[:160] for c in failed)
            results[found.group(1)] = ("FAIL", detail)
        elif noted:
            detail = "; ".join(f"{c['id']} {c['status'].lower()}" for c in noted)
            shown = f"pass ({passed} checks)" if passed else "no check ran"
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
    outcomes: dict[tuple[str, str], dict[str, tuple[str, str]]] = {}
    skipped: dict[str, str] = {}
    with contextlib.ExitStack() as stack:
        binary, missing = redis_binary()
        redis = "" if binary is None else stack.enter_context(running_redis(binary))
        for label, (_workers, _store, options) in CONFIGURATIONS.items():
            if "{redis}" in options and not redis:
                skipped[label] = f"no Redis: {missing}"
                print(f"{label}: skipped, {skipped[label]}", flush=True)
                continue
            chosen = tuple(o.replace("{redis}", redis) for o in options)
            _serve_and_run(args, names, label, chosen, root, outcomes)
    print(
        f"\n@modelcontextprotocol/conformance, {len(names)} server scenarios (--suite all); "
        "the Redis store's server runs the tasks scenarios.\n"
    )
    print("| scenario | era | workers | store | result |")
    print("|---|---|---|---|---|")
    failures: list[str] = []
    for name, versions in names.items():
        for era in ERAS:
            for label, (workers, store, _options) in CONFIGURATIONS.items():
                if not _runs(label, name, era):
                    continue
                why: str | None = skipped.get(label) or not_applicable(name, era, label)
                outcome, detail = outcomes.get((era, label), {}).get(name, ("", ""))
                if label in skipped:
                    shown = f"skipped: {why}"
                elif why is not None:
                    shown = f"not applicable: {why}"
                elif not outcome:
                    if era in versions or "extension" in versions:
                        outcome, detail = "FAIL", "no result"
                    else:
                        continue  # the scenario is not of this era
                if why is None:
                    shown = outcome if not detail else f"{outcome}: {detail}"
                    if outcome == "FAIL":
                        failures.append(f"{name} ({era}, {label})")
                print(f"| {name} | {era} | {workers} | {store} | {shown} |")
    print(f"\nResults under {root}")
    if failures:
        print("\nFAILED: " + ", ".join(failures))
        return 1
    print("\nEvery applicable scenario passed, on both eras, against every server run.")
    return 0


def _runs(label: str, name: str, era: str) -> bool:
    """Whether server ``label`` runs scenario ``name`` on ``era`` (see `STORE_ONLY`)."""
    prefixes = STORE_ONLY.get(label)
    return prefixes is None or (era == "2026-07-28" and name.startswith(prefixes))


def _serve_and_run(
    args: argparse.Namespace,
    names: dict[str, tuple[str, ...]],
    label: str,
    options: tuple[str, ...],
    root: Path,
    outcomes: dict[tuple[str, str], dict[str, tuple[str, str]]],
) -> None:
    """Serve the pack with ``options``; run its scenarios of each era into ``outcomes``."""
    server = Server(label, serve_command("--select", PACK, *SKILLJARS, *options), {})
    try:
        server.wait_ready()
        print(f"{label}: {server.url} ({server.mode})", flush=True)
        slug = re.sub(r"\W+", "-", label)
        for era in ERAS:
            out = root / f"{slug}-{era}"
            wanted = [n for n in names if _runs(label, n, era)]
            if not wanted:
                continue
            if label in STORE_ONLY:
                found: dict[str, tuple[str, str]] = {}
            else:
                found = run_suite(args.node, args.suite, server.url, era, out)
            outcomes[(era, label)] = found
            for name in wanted:  # an extension's scenarios (and a store's), one by one
                versions = names[name]
                alone = "extension" in versions or label in STORE_ONLY
                if alone and not_applicable(name, era, label) is None and name not in found:
                    found.update(
                        run_suite(args.node, args.suite, server.url, era, out / name, scenario=name)
                    )
    finally:
        server.stop()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
