"""The async pipeline's overhead now against the core before this wave, in one run.

This wave runs each async tool in a task of its own, from start to end (before, its
first step ran in the caller's task and the rest in a new one, which broke the tool's
own timeouts and cancel scopes). The promise was that the success path stays within 5%:
``Executor.execute`` of a trivial async tool, over a raw call, against :data:`BEFORE`
(the main of before the wave). On Python 3.12+ the task starts eagerly, so a tool that
never suspends costs no loop round trip; on 3.10 and 3.11 it costs two. This module runs
the same micro-benchmark on both cores, interleaved:

- the core at :data:`BEFORE` is taken from git (``git archive``) into a folder under the
  temporary directory, kept there for the next run; it is pure Python, so it needs no
  build: it runs in this interpreter with its libraries (pydantic, pluggy, ...), only
  ``toolpalette`` itself comes from that folder (``PYTHONPATH``);
- two worker processes, one per core, take turns: each round, each times ``CALLS``
  calls of ``Executor.execute`` and as many raw awaits of the tool, so machine noise
  hits both alike; the overhead is the difference, per call.

The summary records the overhead of the best rounds of each core: on two shared cores
the noise comes in bursts that slow a whole stretch of rounds by half or more, and the
median of each side swings with how many of its rounds a burst happened to hit, while
the best of some ninety rounds is what each core costs undisturbed and moves by a few
percent. The medians, and the median ratio of the two rounds of each turn, are printed
beside it.

Without git, or in a clone that lacks :data:`BEFORE` (a tarball, a shallow clone), it
says so and records nothing. ``BENCH_ROUNDS`` / ``BENCH_CALLS`` scale the run.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import toolpalette

from bench._summary import record

BEFORE = "96cd06d"
"""The main of before this wave: the core every figure here is compared with."""
# Many short rounds: a burst of the machine's other work then spoils a few rounds of
# both cores, which the median drops, rather than part of every long round.
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "31")) * 3
CALLS = int(os.environ.get("BENCH_CALLS", "200")) * 5 // 2
ROOT = Path(__file__).resolve().parent.parent

# What each worker runs: only names both cores offer (``tool``, ``ToolRegistry``,
# ``Executor.execute``). It answers each line it reads with one round's figures.
WORKER = r"""
import asyncio, json, os, sys, time
if os.environ.get("BENCH_WITHOUT_OTEL"):  # OpenTelemetry as if not installed
    sys.modules["opentelemetry"] = None
import toolpalette
from toolpalette import Executor, ToolRegistry

GOOD = {"a": 1, "b": 2}

async def aadd(a: int, b: int) -> int:
    '''Add two integers.'''
    return a + b

async def main() -> None:
    executor = Executor(ToolRegistry([toolpalette.tool(name="aadd")(aadd)]), timeout=30)
    result = await executor.execute("aadd", GOOD)
    assert not result.is_error and result.text == "3", result.text
    print(json.dumps({"core": toolpalette.__file__}), flush=True)
    for line in sys.stdin:
        calls = int(line)
        started = time.perf_counter()
        for _ in range(calls):
            await executor.execute("aadd", GOOD)
        piped = time.perf_counter() - started
        started = time.perf_counter()
        for _ in range(calls):
            await aadd(1, 2)
        raw = time.perf_counter() - started
        print(json.dumps({"pipeline": piped / calls * 1e6, "raw": raw / calls * 1e6}), flush=True)

asyncio.run(main())
"""


def _git(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, check=False)


def _before_source(before: str = BEFORE) -> Path | None:
    """The core's source at ``before``, extracted once under the temporary directory.

    None, having said why, when git or the commit is not there.
    """
    if shutil.which("git") is None:
        print(f"git is not installed: no comparison with {before} in this run.")
        return None
    found = _git("rev-parse", "--verify", "--quiet", f"{before}^{{commit}}")
    if found.returncode != 0:
        print(
            f"commit {before} is not in this checkout (a tarball or a shallow clone?): "
            "no comparison with that core in this run."
        )
        return None
    commit = found.stdout.decode().strip()
    folder = Path(tempfile.gettempdir()) / f"tpbench-before-{commit[:12]}"
    source = folder / "core" / "src"
    if (folder / "complete").exists():
        return source
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    archive = folder / "core.tar"
    made = _git("archive", "--format=tar", f"--output={archive}", commit, "core/src")
    if made.returncode != 0:
        print(f"git archive {before} failed: {made.stderr.decode().strip()}")
        return None
    with tarfile.open(archive) as tar:
        if hasattr(tarfile, "data_filter"):
            tar.extractall(folder, filter="data")
        else:  # pragma: no cover - Python before 3.10.12 / 3.11.4; our own archive
            tar.extractall(folder)
    archive.unlink()
    (folder / "complete").write_text(commit)
    return source


class _Worker:
    """One interpreter running :data:`WORKER`, with ``toolpalette`` from ``source`` or here."""

    def __init__(self, source: Path | None, **env_extra: str) -> None:
        if source is None:  # the core this process imports, wherever it is installed
            source_here = Path(toolpalette.__file__).resolve().parent.parent
        env = {
            **os.environ,
            **env_extra,
            "PYTHONPATH": str(source if source is not None else source_here),
        }
        self.process = subprocess.Popen(
            [sys.executable, "-c", WORKER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            text=True,
            cwd=tempfile.gettempdir(),
        )
        self.core = self._read()["core"]
        if source is not None and not Path(self.core).is_relative_to(source):
            self.close()
            raise RuntimeError(f"the worker for {source} imported {self.core} instead")

    def _read(self) -> dict[str, object]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"a benchmark worker ended (exit code {self.process.wait()})")
        answer: dict[str, object] = json.loads(line)
        return answer

    def round(self, calls: int) -> tuple[float, float]:
        """One round: microseconds per call through the pipeline, and per raw await."""
        assert self.process.stdin is not None
        self.process.stdin.write(f"{calls}\n")
        self.process.stdin.flush()
        answer = self._read()
        return float(answer["pipeline"]), float(answer["raw"])  # type: ignore[arg-type]

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait(timeout=30)


def _overhead(rounds: list[tuple[float, float]]) -> tuple[float, float]:
    """The pipeline's overhead over a raw call: from the medians, and from the best rounds."""
    piped, raw = [r[0] for r in rounds], [r[1] for r in rounds]
    return statistics.median(piped) - statistics.median(raw), min(piped) - min(raw)


def main(argv: list[str]) -> None:
    compare(
        BEFORE,
        "before this wave",
        "async pipeline overhead vs before this wave (best rounds)",
    )


def compare(before_commit: str, label: str, case: str, after_commit: str | None = None) -> None:
    """Time the trivial async tool's overhead on this core and at ``before_commit``.

    Prints both (``label`` names the old one) and records ``case``: the best rounds'
    overhead now (or at ``after_commit``), against the same at ``before_commit``, goal at
    most 1.05x.
    """
    begun = time.perf_counter()
    source = _before_source(before_commit)
    after = _before_source(after_commit) if after_commit is not None else None
    if source is None or (after_commit is not None and after is None):
        return
    before, now = _Worker(source), _Worker(after)
    try:
        samples: dict[str, list[tuple[float, float]]] = {"before": [], "now": []}
        before.round(CALLS // 4)  # warm-up rounds, discarded
        now.round(CALLS // 4)
        for index in range(ROUNDS):
            # Alternate which goes first, so neither always runs right after the other.
            order = ((before, "before"), (now, "now"))
            for worker, key in order if index % 2 == 0 else reversed(order):
                samples[key].append(worker.round(CALLS))
    finally:
        before.close()
        now.close()
    # The overhead is the pipeline's time less the raw call's, as in bench_pipeline.
    old, old_best = _overhead(samples["before"])
    new, new_best = _overhead(samples["now"])
    print(f"{ROUNDS} interleaved rounds of {CALLS} calls of a trivial async tool, per call:\n")
    print("| core | overhead over a raw call, median (µs) | best rounds (µs) |")
    print("|---|---:|---:|")
    print(f"| {label} ({before_commit}) | {old:.2f} | {old_best:.2f} |")
    current = after_commit or f"now ({Path(now.core).parent})"
    print(f"| {current} | {new:.2f} | {new_best:.2f} |")
    turns = zip(samples["before"], samples["now"], strict=True)
    paired = statistics.median((n[0] - n[1]) / (b[0] - b[1]) for b, n in turns)
    print(
        f"\nratio now / before: {new_best / old_best:.2f}x from the best rounds (goal <= 1.05x), "
        f"{new / old:.2f}x from the medians, {paired:.2f}x the median of each turn's ratio"
    )
    print(f"({time.perf_counter() - begun:.1f} s)")
    record(case, new_best, f"the same at {before_commit}", old_best, unit="µs", goal="<= 1.05")


if __name__ == "__main__":
    main(sys.argv[1:])
