"""The plugin manager: pluggy, restricted to ``toolpalette_*`` hooks and made tolerant."""

from __future__ import annotations

import difflib
import logging
import sys
from typing import TYPE_CHECKING, Any, Final, final

import pluggy

from toolpalette import hookspecs
from toolpalette._hookcall import trace_logger
from toolpalette._plugins.switches import Switches

if TYPE_CHECKING:
    from pluggy import HookimplOpts
    from pluggy._hooks import HookImpl

__all__ = ["HOOK_PREFIX", "ToolpaletteManager"]

HOOK_PREFIX: Final = "toolpalette_"
"""Every hook name starts with this; other attributes are never hook implementations."""


@final
class ToolpaletteManager(pluggy.PluginManager):
    """The pluggy ``PluginManager`` of one hub, with the toolpalette hookspecs added.

    Args:
        trace: Log every hook call to ``toolpalette.trace`` (``_hookcall.call_each``,
            the one way hooks are called, writes the lines); None reads
            ``TOOLPALETTE_TRACE_PLUGINS`` from the environment.
    """

    def __init__(self, *, trace: bool | None = None) -> None:
        super().__init__(hookspecs.PROJECT)
        self.add_hookspecs(hookspecs)
        self._unknown: list[str] = []
        self._unknown_by_plugin: dict[str, tuple[str, ...]] = {}
        self._accepted: list[str] = []
        self._impls: dict[str, dict[str, list[HookImpl]]] = {}
        self._names: dict[int, str] = {}
        self.tracing = Switches.from_environ().trace if trace is None else trace
        """Whether this manager turned hook-call logging on (it stays on for the process)."""
        if self.tracing:
            _enable_trace()

    def parse_hookimpl_opts(self, plugin: object, name: str) -> HookimplOpts | None:
        """Pick ``toolpalette_*`` attributes marked with ``@hookimpl``; skip unknown hooks.

        An implementation of a hook that has no spec is remembered (see
        `unknown_hooks()`) and not registered, so it is never called.
        """
        if not name.startswith(HOOK_PREFIX):
            return None
        opts = super().parse_hookimpl_opts(plugin, name)
        if opts is None:
            return None
        hook_name = opts.get("specname") or name
        hook = getattr(self.hook, hook_name, None)
        if hook is None or not hook.has_spec():
            self._unknown.append(name)
            return None
        self._accepted.append(hook_name)
        return opts

    def register(self, plugin: object, name: str | None = None) -> str | None:
        """Register ``plugin`` like pluggy does, remembering its unknown hook names.

        Raises:
            ValueError: the name or the plugin is already registered.
            pluggy.PluginValidationError: an implementation does not match its spec.
        """
        self._unknown, self._accepted = [], []
        try:
            registered = super().register(plugin, name)
        finally:
            unknown, self._unknown = tuple(sorted(set(self._unknown))), []
            accepted, self._accepted = self._accepted, []
        if registered is not None:
            self._unknown_by_plugin[registered] = unknown
            self._names[id(plugin)] = registered
            self._impls[registered] = {
                hook: self._find_impls(hook, plugin, accepted.count(hook))
                for hook in dict.fromkeys(accepted)
            }
        return registered

    def unregister(self, plugin: object | None = None, name: str | None = None) -> Any:
        """Unregister like pluggy does, forgetting the plugin's unknown hook names."""
        key = name if name is not None else self.get_name(plugin) if plugin is not None else None
        removed = super().unregister(plugin, name)
        if key is not None:
            self._unknown_by_plugin.pop(key, None)
            self._impls.pop(key, None)
        if removed is not None:
            self._names.pop(id(removed), None)
        return removed

    def get_name(self, plugin: object) -> str | None:
        """The name ``plugin`` is registered under, or None; a lookup, not a scan of them all.

        A plugin is the object registered, so identity decides (pluggy compares every
        registered plugin with ``==``, which costs a pass over all of them per call).
        """
        name = self._names.get(id(plugin))
        if name is not None and self.get_plugin(name) is plugin:
            return name
        return None

    def unknown_hooks(self, name: str) -> tuple[str, ...]:
        """The ``toolpalette_*`` implementations of plugin ``name`` that match no hook."""
        return self._unknown_by_plugin.get(name, ())

    def hooks_of(self, name: str) -> list[str]:
        """The hooks plugin ``name`` implements, sorted (empty when not registered)."""
        plugin = self.get_plugin(name)
        if plugin is None:
            return []
        return sorted({caller.name for caller in self.get_hookcallers(plugin) or ()})

    def impls_of(self, hook_name: str, plugin_name: str) -> list[HookImpl]:
        """The implementations of ``hook_name`` by plugin ``plugin_name``, in call order.

        Found when the plugin was registered (looking for them among every plugin's at
        each call would cost a pass over all of them per pack).
        """
        return list(self._impls.get(plugin_name, {}).get(hook_name, ()))

    def _find_impls(self, hook_name: str, plugin: object, count: int) -> list[HookImpl]:
        """The ``count`` implementations of ``hook_name`` by ``plugin``, in call order.

        pluggy calls the last one registered first and puts a new implementation near
        the end (tryfirst, plain) or at the start (trylast): the search runs from the
        end and stops once all are found.
        """
        found: list[HookImpl] = []
        for impl in reversed(getattr(self.hook, hook_name).get_hookimpls()):
            if impl.plugin is plugin:
                found.append(impl)
                if len(found) == count:
                    break
        return found

    @staticmethod
    def suggest(hook_name: str) -> str:
        """A hint naming the closest real hook, for an unknown-hook problem."""
        names = [n for n in dir(hookspecs) if n.startswith(HOOK_PREFIX)]
        close = difflib.get_close_matches(hook_name, names, n=1)
        if close:
            return f"did you mean {close[0]}?"
        return "the hooks are: " + ", ".join(sorted(names))


def _enable_trace() -> None:
    """Send ``toolpalette.trace`` (each hook call, logged by ``_hookcall``) to stderr."""
    if not trace_logger.handlers and not logging.getLogger().handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("toolpalette trace: %(message)s"))
        trace_logger.addHandler(handler)
    trace_logger.setLevel(logging.DEBUG)
