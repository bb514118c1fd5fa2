"""Every way to test, lint, type-check, benchmark and demo toolpalette.

``python -m nox`` runs the default sessions (the full test suite, as CI does);
``python -m nox -s demo`` runs the main job. Each session builds the distributions it
needs from this checkout and installs them into its own fresh virtual environment, so
packs and skilljars are always tested as installed distributions.
"""

from __future__ import annotations

from pathlib import Path

import nox

nox.options.default_venv_backend = "venv"
nox.options.reuse_existing_virtualenvs = False
nox.options.error_on_missing_interpreters = False
nox.options.sessions = ["lint", "typecheck", "tests-3.11", "tests-3.10", "dists"]

ROOT = Path(__file__).parent
PYPROJECT = nox.project.load_toml(ROOT / "pyproject.toml")
PYTHONS = ["3.11", "3.10", "3.12", "3.13"]


def _distributions(folder: str) -> list[str]:
    """The distribution folders (those with a pyproject.toml) directly under ``folder``."""
    return sorted(str(p.parent) for p in (ROOT / folder).glob("*/pyproject.toml"))


FIRST_PARTY = ["./core", *_distributions("plugins"), *_distributions("skilljars")]
# The tests and the type check also cover the MCP server: the core with its mcp extra.
WITH_MCP = ["./core[mcp]", *FIRST_PARTY[1:]]
TEST_ONLY = _distributions("tests/integration/packs") + _distributions("tests/integration/jars")
# Test-only distributions whose folder starts with "nodeps-" declare requirements pip
# cannot meet on purpose (e.g. toolpalette>=99); they are installed with --no-deps.
NO_DEPS = [p for p in TEST_ONLY if Path(p).name.startswith("nodeps-")]


def _install_group(session: nox.Session, group: str) -> None:
    session.install(*nox.project.dependency_groups(PYPROJECT, group))


@nox.session(python=PYTHONS)
def tests(session: nox.Session) -> None:
    """Run the test suite against the core and the first-party packs, installed (not editable).

    A Python version that is not on the machine is skipped, not failed.
    """
    _install_group(session, "test")
    session.install(*WITH_MCP)
    session.run(
        "pytest",
        "-m",
        "not dists",
        "-p",
        "no:cacheprovider",
        "--cov=toolpalette",
        "--cov-report=term",
        *session.posargs,
    )


@nox.session(python="3.11")
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
        "pytest", "tests/integration", "-m", "dists", "-p", "no:cacheprovider", *session.posargs
    )


@nox.session(python="3.11")
def lint(session: nox.Session) -> None:
    """Check style and formatting with ruff."""
    _install_group(session, "lint")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


@nox.session(python="3.11")
def typecheck(session: nox.Session) -> None:
    """Type-check the core, the packs, the skilljars and this file with mypy --strict."""
    _install_group(session, "typecheck")
    session.install(*WITH_MCP)
    session.run("mypy")


@nox.session(python="3.11")
def bench(session: nox.Session) -> None:
    """Benchmark toolpalette beside its anchors (langchain-core, mcp, pluggy, stevedore)."""
    _install_group(session, "bench")
    session.install(*WITH_MCP)
    session.run("python", "-m", "bench", *session.posargs)


@nox.session(python="3.11")
def demo(session: nox.Session) -> None:
    """The main job: install the first-party packs and skilljars, then run the demo."""
    session.install(*FIRST_PARTY)
    session.run("toolpalette", "demo", *session.posargs)
