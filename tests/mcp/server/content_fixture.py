"""A pack's prompts and resources: its hooks (``hub.add_plugin``) and a thinker that
declares them by pack, and one that declares the functions themselves (for ``serve``).
"""

from __future__ import annotations

import toolpalette
from toolpalette import ContentSelector, Image, Thinker, ToolSelector

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 16
USERS = {"ada": "Ada Lovelace", "alan": "Alan Turing", "grace": "Grace Hopper"}


@toolpalette.prompt(completions={"language": ["python", "perl", "rust"]})
def review(code: str, language: str = "python") -> str:
    """Review a piece of code.

    Args:
        code: the code to review.
        language: the language it is written in.
    """
    return f"Review this {language} code:\n{code}"


@toolpalette.prompt(title="A picture")
def with_image() -> list[object]:
    """Show the logo."""
    return ["Here is the logo:", Image(PNG, "image/png")]


@toolpalette.prompt
def with_resource() -> list[object]:
    """Quote the guide."""
    block = {
        "type": "resource",
        "resource": {"uri": "docs://guide", "mimeType": "text/plain", "text": guide()},
    }
    return [block, ("assistant", "I have read the guide.")]


@toolpalette.resource("docs://guide", mime_type="text/markdown")
def guide() -> str:
    """The user guide."""
    return "# Guide\nRead me first."


@toolpalette.resource("docs://logo", mime_type="image/png")
def logo() -> bytes:
    """The logo, as PNG."""
    return PNG


@toolpalette.resource(
    "users://{id}/profile",
    completions={"id": lambda p: sorted(u for u in USERS if u.startswith(p))},
)
def profile(id: str) -> dict[str, str]:
    """A user's profile."""
    if id not in USERS:
        raise KeyError(id)
    return {"id": id, "name": USERS[id]}


@toolpalette.resource("admin://reset", read_only=False)
def reset() -> str:
    """Reading this resets the demo (not for read-only thinkers)."""
    return "reset"


@toolpalette.tool(read_only=True)
def ping() -> str:
    """Say pong."""
    return "pong"


@toolpalette.hookimpl
def toolpalette_register_prompts() -> list[object]:
    return [review, with_image, with_resource]


@toolpalette.hookimpl
def toolpalette_register_resources() -> list[object]:
    return [guide, logo, profile, reset]


class ByPack(Thinker):
    """The ``docs`` pack's prompts and resources (added with ``hub.add_plugin``)."""

    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        return ToolSelector().tool(ping)

    @classmethod
    def declare_content(cls) -> ContentSelector:
        return ContentSelector().pack("docs")


class Docs(ByPack):
    """The same prompts and resources, declared as functions (no pack needed)."""

    @classmethod
    def declare_content(cls) -> ContentSelector:
        selector = ContentSelector()
        for prompt in toolpalette_register_prompts():
            selector.prompt(prompt)
        for resource in toolpalette_register_resources():
            selector.resource(resource)
        return selector
