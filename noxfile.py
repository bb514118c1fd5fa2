"""Every way to test, lint, type-check, benchmark and demo toolpalette.

``python -m nox`` runs the default sessions, as CI does, one after another: lint, type
checks, the docs site, the whole test suite on Python 3.11, the core's unit and fault
tests on every other Python the core supports (``core-3.10``, ``core-3.12``,
``core-3.13``), the integration tests and the MCP conformance suite; ``-s ci`` runs
the same side by side. ``python -m nox -s demo`` runs the main job. Each session builds
the distributions it needs from this checkout and installs them into its own fresh
virtual environment, so packs and skilljars are always tested as installed
distributions.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from functools import cache
from pathlib import Path

import nox

# uv makes each session's environment in seconds (nox[uv] brings it); plain venv and
# pip where uv is not installed.
nox.options.default_venv_backend = "uv|venv"
nox.options.reuse_existing_virtualenvs = False
nox.options.error_on_missing_interpreters = False

ROOT = Path(__file__).parent
PYPROJECT = nox.project.load_toml(ROOT / "pyproject.toml")
# The whole suite runs on MAIN_PYTHON; the core's own tests on every other Python the
# core claims (its requires-python and classifiers).
MAIN_PYTHON = "3.11"
OTHER_PYTHONS = ["3.10", "3.12", "3.13"]
# The guides' examples (tests/docs) run once, on MAIN_PYTHON.
CORE_TESTS = ["tests/core", "tests/faults"]
# pytest-xdist: the tests run in one worker process per CPU and one more (many tests
# wait on deadlines or on a child process rather than on the CPU), each taking the next
# test file's tests as it frees up.
PARALLEL = ["-n", str((os.cpu_count() or 1) + 1), "--dist", "worksteal"]

# What CI runs, one after another by default; `ci` runs the same side by side, for a
# machine with CPUs to spare (on two, a run gained 7 % and its load made deadline-bound
# tests miss).
CI_SESSIONS = [
    "lint",
    "typecheck",
    "docs",
    f"tests-{MAIN_PYTHON}",
    *(f"core-{version}" for version in OTHER_PYTHONS),
    "dists",
    "conformance",
]
# How many of them `ci` runs at once.
SIDE_BY_SIDE = max(2, os.cpu_count() or 1)

nox.options.sessions = CI_SESSIONS


def _distributions(folder: str) -> list[str]:
    """The distribution folders (those with a pyproject.toml) directly under ``folder``."""
    return sorted(str(p.parent) for p in (ROOT / folder).glob("*/pyproject.toml"))


FIRST_PARTY = ["./core", *_distributions("plugins"), *_distributions("skilljars")]
# The tests and the type check also cover the MCP server: the core with its mcp extra.
# Code mode's sandbox (pydantic-monty, the core's `code` extra) comes with the test-peers,
# typecheck and bench groups (pyproject.toml), so every session that runs its tests has it.
# The redis extra: the Redis task store's tests (they start a redis-server, see _redis_env).
WITH_MCP = ["./core[mcp,redis]", *FIRST_PARTY[1:]]
# The conformance pack (the suite's test server) is installed by its own session only.
TEST_ONLY = [
    p
    for p in _distributions("tests/integration/packs") + _distributions("tests/integration/jars")
    if Path(p).name != "conformance"
]
# Test-only distributions whose folder starts with "nodeps-" declare requirements pip
# cannot meet on purpose (e.g. toolpalette>=99); they are installed with --no-deps.
NO_DEPS = [p for p in TEST_ONLY if Path(p).name.startswith("nodeps-")]


def _install_group(session: nox.Session, group: str) -> None:
    session.install(*nox.project.dependency_groups(PYPROJECT, group))


def _output(*argv: str) -> str:
    """What ``argv`` prints, or "" when it cannot run or fails (a shim with no version)."""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    except OSError:
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""


@cache
def _interpreter(version: str) -> str | None:
    """Where Python ``version`` (``"3.12"``) is on this machine, or None.

    First ``python3.12`` on PATH, then the newest 3.12.x that pyenv has installed (asked
    of ``pyenv`` itself, on PATH or in ``$PYENV_ROOT/bin``). A pyenv shim on PATH runs
    only the versions pyenv has activated, so each candidate is run once to check that
    it is that version.
    """
    candidates = [shutil.which(f"python{version}")]
    pyenv = shutil.which("pyenv")
    if pyenv is None and os.environ.get("PYENV_ROOT"):
        pyenv = shutil.which("pyenv", path=str(Path(os.environ["PYENV_ROOT"], "bin")))
    if pyenv is not None:
        release = re.compile(rf"{re.escape(version)}\.(\d+)")
        found = [
            m for m in map(release.fullmatch, _output(pyenv, "versions", "--bare").split()) if m
        ]
        if found:
            newest = max(found, key=lambda m: int(m.group(1))).group(0)
            prefix = _output(pyenv, "prefix", newest)
            if prefix:
                candidates.append(str(Path(prefix, "bin", f"python{version}")))
    check = "import sys; print('%d.%d' % sys.version_info[:2])"
    for candidate in candidates:
        if candidate is not None and _output(candidate, "-c", check) == version:
            return candidate
    return None


# Real MCP servers the client is tested against. They pin their own ``mcp``, so they live
# in a virtual environment (and an npm folder) of their own, shared by the test sessions.
MCP_PEERS = ROOT / ".nox" / "mcp-peers"
MCP_PEERS_PYPI = ["mcp-server-time==2026.10.19", "mcp-server-git==2026.10.19"]
MCP_PEERS_NPM = [
    "@modelcontextprotocol/server-filesystem@2026.8.31",
    "@modelcontextprotocol/server-everything@2026.8.31",
]


def _mcp_peers(session: nox.Session) -> dict[str, str]:
    """Install the real MCP servers; the environment variables that point the tests at them.

    Without npm on the machine the filesystem and everything servers are left out (their
    tests skip, saying so); the Python servers are always installed. Installed once per
    set of pins: a stamp file names what is there, so the sessions that `ci` runs side by
    side (after it installed them) only read it.
    """
    venv = MCP_PEERS / "venv"
    bin_dir = venv / ("Scripts" if os.name == "nt" else "bin")
    npm = shutil.which("npm")
    bins = MCP_PEERS / "npm" / "node_modules" / ".bin"
    env = {
        "TOOLPALETTE_MCP_TIME": str(bin_dir / "mcp-server-time"),
        "TOOLPALETTE_MCP_GIT": str(bin_dir / "mcp-server-git"),
    }
    if npm is not None:
        env["TOOLPALETTE_MCP_FILESYSTEM"] = str(bins / "mcp-server-filesystem")
        env["TOOLPALETTE_MCP_EVERYTHING"] = str(bins / "mcp-server-everything")
    wanted = " ".join([*MCP_PEERS_PYPI, *(MCP_PEERS_NPM if npm is not None else [])])
    stamp = MCP_PEERS / "installed.txt"
    if stamp.is_file() and stamp.read_text(encoding="utf-8") == wanted:
        return env
    if not (bin_dir / "python").exists() and not (bin_dir / "python.exe").exists():
        session.run("python", "-m", "venv", str(venv), silent=True)
    python = str(bin_dir / "python")
    session.run(python, "-m", "pip", "install", "-q", *MCP_PEERS_PYPI, external=True)
    if npm is not None:
        session.run(
            npm,
            "install",
            "--prefix",
            str(MCP_PEERS / "npm"),
            "--no-audit",
            "--no-fund",
            "--loglevel=error",
            *MCP_PEERS_NPM,
            external=True,
        )
    stamp.write_text(wanted, encoding="utf-8")
    return env


# The Redis task store is tested against a real server (tests/mcp/server/redis_fixture.py
# starts one on 127.0.0.1, on a free port, per test module). Found on PATH, else Debian's
# package, installed once per nox run when apt-get can (as root).
REDIS_BINARIES = ("redis-server", "valkey-server")
REDIS_APT = ["apt-get", "install", "-y", "-qq", "--no-install-recommends", "redis-server"]


@cache
def _redis_server() -> tuple[str | None, str]:
    """Where a ``redis-server`` (or ``valkey-server``) is, or None and why there is none.

    ``REDIS_SERVER`` if set, else the first on PATH. Asked once per nox run: on a machine
    without one, Debian's ``redis-server`` package is installed with apt-get when this runs
    as root (``apt-get update`` first only when the install fails without it).
    """
    given = os.environ.get("REDIS_SERVER")
    if given:
        return (given, "") if shutil.which(given) else (None, f"REDIS_SERVER={given} won't run")
    found = next(filter(None, map(shutil.which, REDIS_BINARIES)), None)
    if found is not None:
        return found, ""
    apt = shutil.which("apt-get")
    if apt is None:
        return None, "no redis-server or valkey-server on PATH, and no apt-get to install one"
    if os.name != "posix" or os.geteuid() != 0:
        return None, "no redis-server or valkey-server on PATH (apt-get needs root to add one)"
    try:
        done = _quietly(apt, *REDIS_APT[1:])
        if done.returncode != 0:
            _quietly(apt, "update", "-qq")
            done = _quietly(apt, *REDIS_APT[1:])
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"`{' '.join(REDIS_APT)}` could not run: {exc}"
    found = next(filter(None, map(shutil.which, REDIS_BINARIES)), None)
    if found is None:
        said = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        return None, f"`{' '.join(REDIS_APT)}` failed (exit {done.returncode}): {said[0]}"
    return found, ""


def _quietly(*argv: str) -> subprocess.CompletedProcess[str]:
    """Run apt-get ``argv`` without a question or a progress line; its output kept."""
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=900, check=False)


def _redis_env(session: nox.Session) -> dict[str, str]:
    """``REDIS_SERVER`` for the tests, or ``TOOLPALETTE_TEST_NO_REDIS``: why they skip."""
    binary, why = _redis_server()
    if binary is None:
        session.warn(f"The Redis task store's tests skip: {why}")
        return {"TOOLPALETTE_TEST_NO_REDIS": why}
    return {"REDIS_SERVER": binary}


@nox.session(python=False)
def ci(session: nox.Session) -> None:
    """Run every session CI runs (`CI_SESSIONS`), `SIDE_BY_SIDE` at a time; fail if one fails.

    Each runs in a nox of its own (``python -m nox -s NAME``), its output kept in
    ``.nox/logs/NAME.log`` and printed whole when it ends, so the logs never interleave;
    a table of every session's outcome and time closes the run. The MCP peers and the
    redis-server the sessions share are installed first, once.
    """
    _mcp_peers(session)
    _redis_server()
    logs = ROOT / ".nox" / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    waiting = list(CI_SESSIONS)
    running: dict[str, tuple[subprocess.Popen[bytes], float]] = {}
    ended: dict[str, tuple[int, float]] = {}
    try:
        while waiting or running:
            while waiting and len(running) < SIDE_BY_SIDE:
                name = waiting.pop(0)
                with open(logs / f"{name}.log", "wb") as log:
                    child = subprocess.Popen(
                        [sys.executable, "-m", "nox", "-s", name],
                        stdin=subprocess.DEVNULL,
                        stdout=log,
                        stderr=subprocess.STDOUT,
                        cwd=ROOT,
                    )
                running[name] = (child, time.monotonic())
                session.log(f"started {name}")
            for name, (child, started) in list(running.items()):
                if child.poll() is None:
                    continue
                del running[name]
                ended[name] = (child.returncode, time.monotonic() - started)
                sys.stdout.write(
                    (logs / f"{name}.log").read_text(encoding="utf-8", errors="replace")
                )
                sys.stdout.flush()
            time.sleep(0.2)
    finally:
        for child, _ in running.values():
            child.terminate()
            child.wait()
    for name in CI_SESSIONS:
        code, took = ended[name]
        session.log(f"{name:<14} {'ok' if code == 0 else f'FAILED (exit {code})'}  {took:5.0f} s")
    failed = [name for name in CI_SESSIONS if ended[name][0] != 0]
    if failed:
        session.error(f"failed: {', '.join(failed)} (their logs are in .nox/logs)")


@nox.session(python=[MAIN_PYTHON])
def tests(session: nox.Session) -> None:
    """Run the test suite against the core and the first-party packs, installed (not editable).

    The MCP client's tests also run against real MCP servers (``mcp-server-time``,
    ``mcp-server-git`` from PyPI, ``@modelcontextprotocol/server-filesystem`` and
    ``server-everything`` from npm), installed apart from the session (see ``_mcp_peers``);
    the Redis task store's against a real ``redis-server`` (see ``_redis_server``).
    """
    _whole_suite(session)


@nox.session(python=MAIN_PYTHON)
def coverage(session: nox.Session) -> None:
    """The `tests` session's run, measuring the core's line coverage (not run by default).

    Apart from the default run because measuring slows every test by about a third.
    """
    _whole_suite(session, "--cov=toolpalette", "--cov-report=term")


def _whole_suite(session: nox.Session, *options: str) -> None:
    """Install the core with its extras and the first-party packs; run every test but dists."""
    _install_group(session, "test")
    session.install(*WITH_MCP)
    session.run(
        "pytest",
        *PARALLEL,
        "-m",
        "not dists",
        "-p",
        "no:cacheprovider",
        *options,
        *session.posargs,
        env={**_mcp_peers(session), **_redis_env(session)},
    )


# The packages the core's tests check toolpalette against: the provider SDKs, the agent
# frameworks and the core's mcp extra, by name. On a Python one of them does not
# support, the session installs the others, says which it could not install, and the
# tests needing it skip saying so (tests/core/test_peers.py fails on any other missing).
PEERS = {
    re.split(r"[<>=!~\[; ]", requirement, maxsplit=1)[0]: requirement
    for requirement in nox.project.dependency_groups(PYPROJECT, "test-peers")
} | {"mcp": WITH_MCP[0]}


def _install_for_core_tests(session: nox.Session, version: str) -> list[str]:
    """Install what the core's tests need; the names of the peers that would not install.

    Two pip runs when everything installs (the usual case): the core with its ``mcp``
    extra, then the rest together (in one run with the rest, pip 23's resolver does not
    count a local path with an extra as the core the packs require, and backtracks into
    a failure). Otherwise the core, the first-party distributions and the test tools,
    then each peer on its own.
    """
    tools = nox.project.dependency_groups(PYPROJECT, "test-core")
    others = [requirement for name, requirement in PEERS.items() if name != "mcp"]
    try:
        session.install(PEERS["mcp"], silent=True)
        session.install(*tools, *FIRST_PARTY[1:], *others, silent=True)
    except nox.command.CommandFailed:
        pass
    else:
        return []
    session.install(*tools, *FIRST_PARTY)
    missing = []
    for name, requirement in PEERS.items():
        try:
            session.install(requirement, silent=True)
        except nox.command.CommandFailed:
            missing.append(name)
    if missing:
        session.warn(
            f"Not installable on Python {version}: {', '.join(missing)}; "
            "the tests that need them skip, saying so."
        )
    return missing


def _core_tests(version: str) -> Callable[[nox.Session], None]:
    """The session that runs the core's own tests on Python ``version``."""

    def core(session: nox.Session) -> None:
        if session.python is False:
            session.skip(
                f"Python {version} was not found (no python{version} on PATH, none in "
                f"pyenv): the core's tests did not run on Python {version}"
            )
        missing = _install_for_core_tests(session, version)
        env = {**_mcp_peers(session), "TOOLPALETTE_TEST_MISSING_PEERS": ",".join(missing)}
        session.run(
            "pytest",
            *PARALLEL,
            *CORE_TESTS,
            "-m",
            "not dists",
            "-p",
            "no:cacheprovider",
            *session.posargs,
            env=env,
        )

    core.__doc__ = (
        f"Run the core's unit and fault tests on Python {version} (no coverage).\n\n"
        f"The interpreter is python{version} on PATH or pyenv's newest; without one the "
        "session is reported as skipped, naming the version."
    )
    return core


for _version in OTHER_PYTHONS:
    nox.session(name=f"core-{_version}", python=_interpreter(_version) or False)(
        _core_tests(_version)
    )


@nox.session(python=MAIN_PYTHON)
def dists(session: nox.Session) -> None:
    """Install the first-party and the test-only packs and skilljars into a fresh venv.

    The test-only packs include broken and colliding ones on purpose; the tests in
    ``tests/integration`` assert that the hub survives them and reports each one.
    """
    _install_group(session, "test")
    session.install(*FIRST_PARTY, *(p for p in TEST_ONLY if p not in NO_DEPS))
    if NO_DEPS:
        session.install("--no-deps", *NO_DEPS)
    session.run(
        "pytest",
        *PARALLEL,
        "tests/integration",
        "-m",
        "dists",
        "-p",
        "no:cacheprovider",
        *session.posargs,
    )


@nox.session(python=MAIN_PYTHON)
def lint(session: nox.Session) -> None:
    """Check style and formatting with ruff, and the core's import layers with import-linter.

    The layers (``[tool.importlinter]`` in pyproject.toml) are checked against the core
    installed from this checkout: imports run downward only, with no circle.
    """
    _install_group(session, "lint")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    session.install("--no-deps", "./core")
    session.run("lint-imports")


@nox.session(python=MAIN_PYTHON)
def typecheck(session: nox.Session) -> None:
    """Type-check the core, the packs, the skilljars and this file with mypy --strict."""
    _install_group(session, "typecheck")
    session.install(*WITH_MCP)
    session.run("mypy")


@nox.session(python=MAIN_PYTHON)
def docs(session: nox.Session) -> None:
    """Build the documentation site into ``site/`` in strict mode: a broken link fails.

    MkDocs (``mkdocs.yml``) with Material; the API reference is read from the core's
    sources by mkdocstrings, nothing imported, so only the ``docs`` group is installed.
    Open ``site/index.html``, or run ``mkdocs serve`` in that environment to write docs.
    Then tests/docs/test_built_site.py checks the built pages.
    """
    _install_group(session, "docs")
    session.run(
        "mkdocs",
        "build",
        "--strict",
        "--clean",
        *session.posargs,
        env={"NO_MKDOCS_2_WARNING": "1"},
    )
    # The built pages themselves: no raw reStructuredText role, search readable from files.
    session.install("pytest>=8.0", "pytest-timeout>=2.3", "pytest-asyncio>=0.24")
    session.run(
        "python",
        "-m",
        "pytest",
        "tests/docs/test_built_site.py",
        "-p",
        "no:cacheprovider",
        "-q",
        env={"TOOLPALETTE_SITE": "site"},
    )


# Packages of the bench group used for their data files only, installed without their
# dependencies (bfcl-eval's are the leaderboard's model clients: torch, vllm...).
BENCH_DATA_ONLY = ("bfcl-eval",)


@nox.session(python=MAIN_PYTHON)
def bench(session: nox.Session) -> None:
    """Benchmark toolpalette beside its anchors and peers (FastMCP, pydantic-ai, mcp, bm25s...)."""
    group = nox.project.dependency_groups(PYPROJECT, "bench")
    data = [r for r in group if r.startswith(BENCH_DATA_ONLY)]
    session.install(*[r for r in group if r not in data])
    session.install("--no-deps", *data)
    session.install(*WITH_MCP)
    # bench_mcp_client calls the real MCP servers the client's tests use.
    session.run("python", "-m", "bench", *session.posargs, env=_mcp_peers(session))


@nox.session(python=MAIN_PYTHON)
def load(session: nox.Session) -> None:
    """Load and soak ``toolpalette serve --http`` with Locust, beside the SDK's MCPServer.

    Not part of CI (a full run takes about half an hour, the soak ten minutes):
    ``nox -s load`` runs the cases, ``nox -s load -- --soak`` the soak, ``-- --quick``
    a short smoke run; see ``python -m bench.load --help``.
    """
    _install_group(session, "load")
    session.install(*WITH_MCP)
    session.run("python", "-m", "bench.load", *session.posargs)


# The official MCP conformance suite, from npm, into a folder of its own under .nox. Its
# command needs Node.js 22 or newer: an older node on the machine gets the npm ``node``
# package (22) installed beside it.
CONFORMANCE = ROOT / ".nox" / "conformance-suite"
CONFORMANCE_NPM = "@modelcontextprotocol/conformance@0.2.0-alpha.12"
CONFORMANCE_PACK = str(ROOT / "tests" / "integration" / "packs" / "conformance")
CONFORMANCE_NODE_NPM = "node@22"


@nox.session(python=MAIN_PYTHON)
def conformance(session: nox.Session) -> None:
    """Run the MCP conformance suite's server scenarios against ``toolpalette serve --http``.

    Serves the test pack ``toolpalette-testpack-conformance`` (the suite's test server,
    written on the public pack API) and the first-party skilljars with one worker and
    with ``--workers 2``, runs every server scenario (``--suite all``) on both protocol
    eras against each, then the tasks scenarios against ``--workers 2 --task-store
    redis://`` (a redis-server of its own, see ``_redis_server``), and prints one row per
    scenario, era, server and store. Fails when an applicable scenario fails (what does
    not apply is listed with the reason: docs/architecture.md, "The conformance suite").
    Skipped, saying so, on a machine without npm.
    """
    npm = shutil.which("npm")
    if npm is None:
        session.skip("the conformance suite needs npm (and Node.js) on the machine")
    session.install(*WITH_MCP)
    session.install(CONFORMANCE_PACK)
    install = [npm, "install", "--prefix", str(CONFORMANCE), "--no-audit", "--no-fund"]
    session.run(*install, "--loglevel=error", CONFORMANCE_NPM, external=True)
    node = shutil.which("node") or ""
    if _node_major(node) < 22:
        session.run(*install, "--loglevel=error", CONFORMANCE_NODE_NPM, external=True)
        node = str(CONFORMANCE / "node_modules" / ".bin" / "node")
    suite = CONFORMANCE / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist"
    session.run(
        "python",
        "-m",
        "bench.load.conformance",
        "--node",
        node,
        "--suite",
        str(suite / "index.js"),
        env=_redis_env(session),
    )


def _node_major(node: str) -> int:
    """The major version of ``node`` (0 when there is none)."""
    if not node:
        return 0
    import subprocess

    found = subprocess.run([node, "--version"], capture_output=True, text=True, check=False)
    try:
        return int(found.stdout.strip().lstrip("v").split(".")[0])
    except ValueError:
        return 0


@nox.session(python=MAIN_PYTHON)
def demo(session: nox.Session) -> None:
    """The main job: install the first-party packs and skilljars, then run the demo."""
    session.install(*FIRST_PARTY)
    session.run("toolpalette", "demo", *session.posargs)
