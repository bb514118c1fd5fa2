"""``toolpalette serve``'s authorization and per-scope palettes: options and ``[serve]``."""

from __future__ import annotations

import argparse
import logging
import os
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final

from toolpalette._plugins.config import SERVE_AUTH_KEYS

if TYPE_CHECKING:
    from toolpalette._agents.thinker import Thinker
    from toolpalette._hub import ToolHub

__all__ = [
    "AUTH_KEYS",
    "SettingsError",
    "add_options",
    "app_options",
    "from_args",
    "server_options",
]

AUTH_KEYS = SERVE_AUTH_KEYS
"""The authorization settings, as ``[serve]`` keys (the options are ``--auth-...``)."""


class SettingsError(Exception):
    """A setting of ``serve`` cannot be used (the message says which and why)."""


def add_options(parser: argparse.ArgumentParser) -> None:
    """Add the ``--auth-*`` options."""
    group = parser.add_argument_group(
        "authorization (HTTP; also the [serve] table of the configuration)"
    )
    group.add_argument("--auth-issuer", metavar="URL", help="the tokens' issuer (iss)")
    group.add_argument("--auth-audience", metavar="AUD", help="the tokens' audience (aud)")
    keys = group.add_mutually_exclusive_group()
    keys.add_argument("--auth-jwks-url", metavar="URL", help="the issuer's JWKS URL")
    keys.add_argument("--auth-public-key-file", metavar="PATH", help="the issuer's PEM public key")
    group.add_argument(
        "--auth-required-scope",
        dest="auth_required_scopes",
        metavar="SCOPE",
        action="append",
        help="a scope every token must grant (repeat for several; else 403)",
    )
    group.add_argument(
        "--auth-resource-url",
        metavar="URL",
        help="this endpoint's public URL, for the metadata document (default: the audience)",
    )


def from_args(args: argparse.Namespace) -> dict[str, Any]:
    """The authorization settings given on the command line (JSON, for the workers)."""
    return {key: getattr(args, key) for key in AUTH_KEYS if getattr(args, key) is not None}


def server_options(hub: ToolHub, given: Mapping[str, Any]) -> dict[str, Any]:
    """The session limits of ``asgi_app`` (the command line over ``[serve]``).

    Also applies ``[serve] log_level`` when the command line gave none.

    Raises:
        SettingsError: a setting has the wrong type or is out of range.
    """
    table = hub.config.serve
    level = given.get("log_level") or table.get("log_level")
    if level is not None and not given.get("log_level"):
        if not isinstance(level, str) or level.upper() not in _LEVELS:
            raise SettingsError(f"[serve] log_level must be one of {', '.join(_LEVELS)}")
        logging.getLogger().setLevel(level.upper())
    found: dict[str, Any] = {}
    for key in ("max_sessions", "sessions_per_client"):
        value = given.get(key)
        if value is None:
            value = table.get(key)
        if value is None:
            continue
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise SettingsError(f"[serve] {key} must be a whole number of at least 1")
        found[key] = value
    return found


_LEVELS: Final = ("DEBUG", "INFO", "WARNING", "ERROR")


def app_options(
    hub: ToolHub,
    given: Mapping[str, Any],
    *,
    http: bool,
    import_thinker: Callable[[str], type[Thinker]],
) -> dict[str, Any]:
    """``asgi_app``'s ``auth`` and ``thinker_for``: the options over ``[serve]``.

    Raises:
        SettingsError: a setting has the wrong type, is missing, or names no thinker.
    """
    if not http:  # the configuration's settings are for HTTP; stdio has no tokens
        if given:
            raise SettingsError("authorization serves HTTP only: add --http")
        return {}
    table = hub.config.serve
    settings = {key: table[key] for key in AUTH_KEYS if key in table}
    if "auth_public_key_file" in settings:
        settings["auth_public_key_file"] = _relative(settings["auth_public_key_file"], hub)
    if "auth_jwks_url" in given:
        settings.pop("auth_public_key_file", None)
    if "auth_public_key_file" in given:
        settings.pop("auth_jwks_url", None)
    settings.update(given)
    palettes = table.get("palettes", {})
    if not isinstance(palettes, Mapping):
        raise SettingsError("[serve] palettes must map scopes to thinkers")
    if not settings and not palettes:
        return {}
    auth = _auth(settings)
    if auth is None:
        raise SettingsError("[serve] palettes need authorization: set auth_issuer and the rest")
    choices = {str(scope): _choice(str(scope), v, import_thinker) for scope, v in palettes.items()}
    for choice in choices.values():
        if choice.thinker is not None:
            _check(hub, choice.thinker)
    return {"auth": auth, "thinker_for": _by_scope(choices) if choices else None}


def _relative(path: Any, hub: ToolHub) -> Any:
    source = hub.config.source
    if isinstance(path, str) and source is not None:
        return os.path.join(os.path.dirname(source), path)
    return path


def _auth(settings: Mapping[str, Any]) -> Any:
    if not settings:
        return None
    for key, value in settings.items():
        wanted = list if key == "auth_required_scopes" else str
        if not isinstance(value, wanted) or (
            wanted is list and not all(isinstance(v, str) for v in value)
        ):
            shown = "a list of strings" if wanted is list else "a string"
            raise SettingsError(f"{key} must be {shown}")
    missing = [k for k in ("auth_issuer", "auth_audience") if k not in settings]
    if missing:
        raise SettingsError(f"authorization needs {' and '.join(missing)}")
    jwks, pem = settings.get("auth_jwks_url"), settings.get("auth_public_key_file")
    if (jwks is None) == (pem is None):
        raise SettingsError("authorization needs one of auth_jwks_url and auth_public_key_file")
    from toolpalette.mcp import JWTAuth

    auth = JWTAuth(
        settings["auth_issuer"],
        settings["auth_audience"],
        jwks_url=jwks,
        public_key_file=pem,
        required_scopes=tuple(settings.get("auth_required_scopes", ())),
        resource_url=settings.get("auth_resource_url"),
    )
    try:
        auth.resource()
        auth.token_verifier()  # reads the key file now
    except (ValueError, OSError) as exc:
        raise SettingsError(f"authorization cannot be used: {exc}") from exc
    return auth


def _choice(scope: str, value: Any, import_thinker: Callable[[str], type[Thinker]]) -> Any:
    from toolpalette.mcp import PaletteChoice

    if isinstance(value, str):
        return PaletteChoice(import_thinker(value))
    if not isinstance(value, Mapping) or set(value) - {"thinker", "read_only"}:
        raise SettingsError(
            f"[serve] palettes {scope!r}: give 'package.module:Class' or a table of "
            "thinker and read_only"
        )
    thinker, read_only = value.get("thinker"), value.get("read_only", False)
    if not isinstance(read_only, bool) or not isinstance(thinker, (str, type(None))):
        raise SettingsError(f"[serve] palettes {scope!r}: thinker is a string, read_only a bool")
    chosen = import_thinker(thinker) if thinker is not None else None
    return PaletteChoice(chosen, read_only=read_only)


def _check(hub: ToolHub, thinker: type[Thinker]) -> None:
    from toolpalette.errors import ToolpaletteError

    try:
        hub.resolve_thinker(thinker)
    except ToolpaletteError as exc:
        raise SettingsError(f"the palette cannot be served: {exc}") from exc


def _by_scope(choices: Mapping[str, Any]) -> Callable[[Any], Any]:
    """``thinker_for``: the choice of the first scope of the table the principal holds."""

    def thinker_for(principal: Any) -> Any:
        for scope, choice in choices.items():
            if scope in principal.scopes:
                return choice
        return None

    return thinker_for
