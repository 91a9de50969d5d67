"""The tool bridge on the client's side: the tools a run's code may call.

``AirlockSandbox.run(code, tools={"search": fn}, approve=hook)`` declares
each tool to the daemon (its name, the first paragraph of its docstring and
a JSON schema made from its signature) and answers each call the code makes
(``import airlock_tools`` in the sandbox): the approval hook first, then the
tool. A refused or failing call is an error answer to the code; it never
raises in the caller. Standard library only.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import json
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Dict, List, Mapping, Optional, Tuple, Union

__all__ = ["ToolSet", "ApproveHook", "TOOL_WAIT_SECONDS"]

# The daemon waits this long for an answer (docs/protocol.md, "Tools").
TOOL_WAIT_SECONDS = 30.0
# Bounds of the protocol: tools per run, name, description, schema, a result.
TOOLS_MAX = 32
NAME_MAX = 64
DESCRIPTION_MAX = 1024
SCHEMA_MAX = 8 * 1024
RESULT_MAX = 64 * 1024
ERROR_MAX = 1024

ApproveHook = Callable[[str, Dict[str, Any]], Union[bool, Dict[str, Any], Awaitable[Union[bool, Dict[str, Any]]]]]

_JSON_TYPES = {int: "integer", float: "number", str: "string", bool: "boolean", list: "array", dict: "object"}


def _valid_name(name: str) -> bool:
    return (
        0 < len(name) <= NAME_MAX
        and name.isascii()
        and (name[0].isalpha() or name[0] == "_")
        and all(c.isalnum() or c == "_" for c in name)
    )


def _schema(fn: Callable[..., Any]) -> Optional[str]:
    """A JSON schema of fn's keyword arguments, from its signature (None when it has none usable)."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    props: Dict[str, Any] = {}
    required: List[str] = []
    for p in sig.parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD, p.POSITIONAL_ONLY):
            continue
        ann = p.annotation
        if isinstance(ann, str):  # from __future__ import annotations
            ann = {"int": int, "float": float, "str": str, "bool": bool, "list": list, "dict": dict}.get(ann)
        props[p.name] = {"type": _JSON_TYPES[ann]} if ann in _JSON_TYPES else {}
        if p.default is p.empty:
            required.append(p.name)
    schema: Dict[str, Any] = {"type": "object", "properties": props}
    if required:
        schema["required"] = required
    text = json.dumps(schema, separators=(",", ":"))
    return text if len(text.encode()) <= SCHEMA_MAX else None


def _description(fn: Callable[..., Any]) -> Optional[str]:
    doc = inspect.getdoc(fn)
    if not doc:
        return None
    first = doc.split("\n\n", 1)[0].strip()
    return first.encode()[:DESCRIPTION_MAX].decode("utf-8", "ignore") or None


@dataclass(frozen=True)
class _Tool:
    name: str
    fn: Callable[..., Any]
    description: Optional[str]
    schema: Optional[str]


class ToolSet:
    """The checked tools of one run and its approval hook."""

    def __init__(self, tools: Mapping[str, Callable[..., Any]], approve: Optional[ApproveHook]) -> None:
        if not isinstance(tools, Mapping):
            raise TypeError(f"tools must be a mapping of name to function, not {type(tools).__name__}")
        if not tools:
            raise ValueError("tools must name at least one tool")
        if len(tools) > TOOLS_MAX:
            raise ValueError(f"at most {TOOLS_MAX} tools per run")
        if approve is not None and not callable(approve):
            raise TypeError("approve must be callable")
        self.tools: Dict[str, _Tool] = {}
        for name, fn in tools.items():
            if not isinstance(name, str) or not _valid_name(name):
                raise ValueError(f"tool name {name!r} must be 1 to 64 of [A-Za-z_][A-Za-z0-9_]*")
            if not callable(fn):
                raise TypeError(f"tools[{name!r}] must be callable")
            self.tools[name] = _Tool(name, fn, _description(fn), _schema(fn))
        self.approve = approve

    def declarations(self) -> List[Tuple[bytes, Optional[bytes], Optional[bytes]]]:
        """(name, description, schema) of each tool, as libairlock takes them."""
        return [
            (t.name.encode(), t.description.encode() if t.description else None, t.schema.encode() if t.schema else None)
            for t in self.tools.values()
        ]

    def _args(self, name: str, raw: bytes) -> Tuple[_Tool, Dict[str, Any]]:
        tool = self.tools.get(name)
        if tool is None:
            raise LookupError(f"no tool {name!r}")
        args = json.loads(raw)
        if not isinstance(args, dict):
            raise ValueError("the arguments are not a JSON object")
        return tool, args

    @staticmethod
    def _answer(result: Any) -> Tuple[bool, bytes, bool]:
        text = json.dumps(result, allow_nan=False, ensure_ascii=False).encode()
        if len(text) > RESULT_MAX:
            return False, b"the tool's result is longer than 64 KiB", False
        return True, text, False

    @staticmethod
    def _failure(e: BaseException) -> Tuple[bool, bytes, bool]:
        return False, f"{type(e).__name__}: {e}".encode()[:ERROR_MAX], False

    @staticmethod
    def _verdict(v: Any, args: Dict[str, Any]) -> Optional[Dict[str, Any]]:
        """The args to call with, or None when the hook refused."""
        if v is True:
            return args
        if isinstance(v, dict):
            return v
        return None

    async def handle_async(self, loop: asyncio.AbstractEventLoop, name: str, raw: bytes) -> Tuple[bool, bytes, bool]:
        """(ok, result JSON or error message, refused) for one call; never raises but for cancellation."""
        try:
            tool, args = self._args(name, raw)
            if self.approve is not None:
                v = self.approve(name, args)
                if inspect.isawaitable(v):
                    v = await v
                edited = self._verdict(v, args)
                if edited is None:
                    return False, b"refused by the approval hook", True
                args = edited
            if inspect.iscoroutinefunction(tool.fn):
                result = await asyncio.wait_for(tool.fn(**args), TOOL_WAIT_SECONDS)
            else:
                result = await asyncio.wait_for(
                    loop.run_in_executor(None, functools.partial(tool.fn, **args)), TOOL_WAIT_SECONDS
                )
                if inspect.isawaitable(result):
                    result = await asyncio.wait_for(result, TOOL_WAIT_SECONDS)
            return self._answer(result)
        except asyncio.CancelledError:
            raise
        except Exception as e:
            return self._failure(e)

    def handle_sync(self, name: str, raw: bytes) -> Tuple[bool, bytes, bool]:
        """The same for a blocking run: coroutines are run to completion here."""

        def settle(v: Any) -> Any:
            if inspect.isawaitable(v):
                return asyncio.run(asyncio.wait_for(v, TOOL_WAIT_SECONDS))  # type: ignore[arg-type]
            return v

        try:
            tool, args = self._args(name, raw)
            if self.approve is not None:
                edited = self._verdict(settle(self.approve(name, args)), args)
                if edited is None:
                    return False, b"refused by the approval hook", True
                args = edited
            return self._answer(settle(tool.fn(**args)))
        except Exception as e:
            return self._failure(e)
