"""The public surface: ``__all__`` is sorted and complete, and re-exports say where they live."""

from __future__ import annotations
import __future__

import importlib
import pickle
from types import ModuleType

import toolpalette
from toolpalette import errors, hookspecs, testing

PUBLIC_MODULES = (toolpalette, errors, hookspecs, testing)


def public_names(module: ModuleType) -> list[str]:
    """Names bound in ``module`` that a reader would take as public API."""
    names = []
    for name, value in vars(module).items():
        if name.startswith("_") or isinstance(value, ModuleType):
            continue
        if isinstance(value, __future__._Feature):  # from __future__ import annotations
            continue
        names.append(name)
    return names


def test_all_is_sorted() -> None:
    assert toolpalette.__all__ == sorted(toolpalette.__all__)


def test_all_is_complete() -> None:
    listed = set(toolpalette.__all__)
    missing = sorted(set(public_names(toolpalette)) - listed)
    assert missing == [], f"public but not in __all__: {missing}"


def test_every_listed_name_resolves() -> None:
    for name in toolpalette.__all__:
        assert getattr(toolpalette, name) is not None, name
    assert isinstance(toolpalette.__version__, str)


def test_star_import_gives_exactly_all() -> None:
    namespace: dict[str, object] = {}
    exec("from toolpalette import *", namespace)
    assert sorted(k for k in namespace if k != "__builtins__") == sorted(toolpalette.__all__)


def test_reexported_classes_say_toolpalette_and_resolve_from_there() -> None:
    for name in toolpalette.__all__:
        obj = getattr(toolpalette, name)
        if not isinstance(obj, type):
            continue
        module = obj.__module__
        assert module == "toolpalette" or not any(
            part.startswith("_") for part in module.split(".")
        ), f"{name} claims private module {module}"
        assert module.startswith("toolpalette")
        assert getattr(importlib.import_module(module), obj.__qualname__) is obj


def test_classes_from_private_modules_are_renamed_to_the_package() -> None:
    for name in ("ToolRegistry", "ToolProvider", "Tool", "ToolContext", "Surface", "Origin"):
        assert getattr(toolpalette, name).__module__ == "toolpalette"


def test_reexported_errors_keep_their_public_module_and_pickle() -> None:
    error = toolpalette.ToolNotFoundError(tool_name="x", available=["a"])
    assert type(error).__module__ == "toolpalette.errors"
    assert str(pickle.loads(pickle.dumps(error))) == str(error)


def test_public_submodules_have_sorted_complete_all() -> None:
    for module in (errors, hookspecs, testing):
        assert module.__all__ == sorted(module.__all__), module.__name__
        for name in module.__all__:
            assert hasattr(module, name), f"{module.__name__}.{name}"


def test_public_objects_have_docstrings() -> None:
    for module in PUBLIC_MODULES:
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name)
            if callable(obj) and not isinstance(obj, str):
                assert (obj.__doc__ or "").strip(), f"{module.__name__}.{name}"


def test_every_public_exception_and_warning_is_at_the_top_level() -> None:
    raised = [
        name
        for name in errors.__all__
        if isinstance(getattr(errors, name), type)
        and issubclass(getattr(errors, name), BaseException)
    ]
    assert "ToolpaletteError" in raised
    assert "PluginWarning" in raised
    for name in raised:
        assert name in toolpalette.__all__, name
        assert getattr(toolpalette, name) is getattr(errors, name), name
