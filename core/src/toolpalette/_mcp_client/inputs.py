"""A task's input requests (elicitation, sampling, roots) answered by the call's channel."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any, Final

from toolpalette._mcp_client.tasks import Answerer
from toolpalette._tools.channel import ClientChannel
from toolpalette.errors import ClientRequestError

__all__ = ["answerer", "put"]

_SAMPLING_OPTIONS: Final = {
    "maxTokens": "max_tokens",
    "systemPrompt": "system_prompt",
    "stopSequences": "stop_sequences",
    "modelPreferences": "model_preferences",
    "includeContext": "include_context",
}
_FEATURES: Final = {
    "elicitation/create": "elicitation",
    "sampling/createMessage": "sampling",
    "roots/list": "roots",
}


def answerer(channel: ClientChannel) -> Answerer:
    """The `tasks.Answerer` asking ``channel`` on the running loop (the caller's).

    The channel is awaited on the loop of the call that holds it, as a local tool's
    questions are; the answer goes back to the sessions' loop, which awaits it.
    """
    caller = asyncio.get_running_loop()

    async def answer(key: str, request: Mapping[str, Any]) -> dict[str, Any]:
        asked = put(channel, key, request)
        if asyncio.get_running_loop() is caller:
            return await asked
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(asked, caller))

    return answer


async def put(channel: ClientChannel, key: str, request: Mapping[str, Any]) -> dict[str, Any]:
    """One input request put to ``channel``; the result to send back, in wire form.

    Raises:
        ClientRequestError: the channel cannot answer it, or the request is of no kind
            a tool's channel answers.
    """
    method = request.get("method")
    params = request.get("params")
    params = params if isinstance(params, Mapping) else {}
    feature = _FEATURES.get(method) if isinstance(method, str) else None
    if feature == "elicitation":
        message, schema = params.get("message"), params.get("requestedSchema")
        if not isinstance(message, str) or not isinstance(schema, Mapping):
            raise ClientRequestError(feature=feature, reason="failed")
        elicited = await channel.elicit(message, schema, key=key)
        wire: dict[str, Any] = {"action": elicited.action}
        if elicited.content is not None:
            wire["content"] = dict(elicited.content)
        return wire
    if feature == "sampling":
        messages = params.get("messages")
        if not isinstance(messages, list):
            raise ClientRequestError(feature=feature, reason="failed")
        options: dict[str, Any] = {
            _SAMPLING_OPTIONS.get(str(name), str(name)): value
            for name, value in params.items()
            if name not in ("messages", "_meta")
        }
        sampled = await channel.sample(messages, options, key=key)
        out: dict[str, Any] = {"role": sampled.role, "content": dict(sampled.content)}
        out["model"] = sampled.model or "unknown"
        if sampled.stop_reason is not None:
            out["stopReason"] = sampled.stop_reason
        return out
    if feature == "roots":
        roots = await channel.roots(key=key)
        listed = []
        for root in roots:
            item: dict[str, Any] = {"uri": root.uri}
            if root.name is not None:
                item["name"] = root.name
            if root.meta:
                item["_meta"] = dict(root.meta)
            listed.append(item)
        return {"roots": listed}
    raise ClientRequestError(feature=str(method)[:64], reason="unsupported")
