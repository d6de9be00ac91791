"""Validates captured Anthropic Messages requests against a definition the
project does not share: the request types of Anthropic's official Python
SDK (`anthropic.types.MessageCreateParams*`), checked with pydantic in
strict mode with unknown keys forbidden at every level, plus the API's
documented rules that a type cannot express.

Usage: validate.py CAPTURED.jsonl [...]; exits 1 when a request fails or
when the validator's own controls are not refused.
"""

import importlib
import json
import pkgutil
import re
import sys
from collections.abc import Iterator

import anthropic
import anthropic.types
import pydantic
from pydantic import ConfigDict, TypeAdapter
from typing_extensions import is_typeddict

# File-upload fields are typed `IO[bytes]`, which pydantic cannot build a
# schema for unless told to take such types as they are.
STRICT = ConfigDict(strict=True, extra="forbid", arbitrary_types_allowed=True)
TOOL_ID = re.compile(r"^[a-zA-Z0-9_-]+$")


def forbid_unknown_keys() -> None:
    """Every type of the SDK refuses keys it does not define: the request
    TypedDicts (pydantic ignores unknown keys of a TypedDict by default) and
    the response models, which the SDK also accepts as input blocks (they
    allow unknown keys, and would let any block with a known `type` pass)."""
    models = []
    for info in pkgutil.iter_modules(anthropic.types.__path__, "anthropic.types."):
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if not isinstance(value, type) or not value.__module__.startswith("anthropic."):
                continue
            if is_typeddict(value):
                value.__pydantic_config__ = STRICT
            elif issubclass(value, pydantic.BaseModel) and value not in models:
                value.model_config["extra"] = "forbid"
                models.append(value)
    for model in models:
        model.model_rebuild(force=True)


forbid_unknown_keys()
from anthropic.types.message_create_params import (  # noqa: E402
    MessageCreateParamsNonStreaming,
    MessageCreateParamsStreaming,
)

ADAPTERS = {
    False: TypeAdapter(MessageCreateParamsNonStreaming),
    True: TypeAdapter(MessageCreateParamsStreaming),
}


def force(value):
    """Pydantic validates `Iterable[...]` fields lazily: consume them all so
    every nested item is validated now."""
    if isinstance(value, dict):
        return {k: force(v) for k, v in value.items()}
    if isinstance(value, (str, bytes, int, float, bool)) or value is None:
        return value
    if isinstance(value, (list, tuple)) or isinstance(value, Iterator) or hasattr(value, "__iter__"):
        return [force(v) for v in value]
    return value


def blocks(content):
    """A message's content as a list of blocks."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return list(content)


def semantic_errors(body: dict) -> list[str]:
    """The API's documented rules that the SDK types do not express."""
    errors = []
    messages = body.get("messages", [])
    if not messages:
        errors.append("messages: at least one message is required")
        return errors
    if messages[0].get("role") != "user":
        errors.append("messages.0: the first message must use the user role")
    for i, m in enumerate(messages):
        if m.get("role") not in ("user", "assistant"):
            errors.append(f"messages.{i}: role {m.get('role')!r}: only user and assistant here (system is top-level)")
        if i > 0 and m.get("role") == messages[i - 1].get("role"):
            errors.append(f"messages.{i}: roles must alternate between user and assistant")
        content = blocks(m.get("content", []))
        if not content:
            errors.append(f"messages.{i}: content must not be empty")
        for j, b in enumerate(content):
            if b.get("type") == "text" and not b.get("text"):
                errors.append(f"messages.{i}.content.{j}: text content blocks must be non-empty")
            if b.get("type") == "tool_use":
                if m.get("role") != "assistant":
                    errors.append(f"messages.{i}.content.{j}: tool_use only in assistant messages")
                if not TOOL_ID.match(b.get("id", "")):
                    errors.append(f"messages.{i}.content.{j}: tool_use id {b.get('id')!r} must match {TOOL_ID.pattern}")
                if not isinstance(b.get("input"), dict):
                    errors.append(f"messages.{i}.content.{j}: tool_use input must be an object")
            if b.get("type") == "tool_result" and m.get("role") != "user":
                errors.append(f"messages.{i}.content.{j}: tool_result only in user messages")
        # Every tool_result answers a tool_use of the assistant message just
        # before, and comes before any other content of its message.
        results = [b for b in content if b.get("type") == "tool_result"]
        if results:
            seen_other = False
            for j, b in enumerate(content):
                if b.get("type") != "tool_result":
                    seen_other = True
                elif seen_other:
                    errors.append(f"messages.{i}.content.{j}: tool_result blocks must come before any other content")
            previous = blocks(messages[i - 1].get("content", [])) if i > 0 else []
            uses = {b.get("id") for b in previous if b.get("type") == "tool_use"}
            for b in results:
                if b.get("tool_use_id") not in uses:
                    errors.append(
                        f"messages.{i}: tool_result {b.get('tool_use_id')!r} answers no tool_use of the previous assistant message"
                    )
        # Every tool_use is answered in the next message.
        uses = [b.get("id") for b in content if b.get("type") == "tool_use"]
        if uses:
            following = blocks(messages[i + 1].get("content", [])) if i + 1 < len(messages) else []
            answered = {b.get("tool_use_id") for b in following if b.get("type") == "tool_result"}
            for u in uses:
                if u not in answered:
                    errors.append(f"messages.{i}: tool_use {u!r} has no tool_result in the next message")
    last = messages[-1]
    if last.get("role") == "assistant":
        text = "".join(b.get("text", "") for b in blocks(last.get("content", [])) if b.get("type") == "text")
        if text != text.rstrip():
            errors.append("messages: final assistant content cannot end with trailing whitespace")
    ids = [b.get("id") for m in messages for b in blocks(m.get("content", [])) if b.get("type") == "tool_use"]
    if len(ids) != len(set(ids)):
        errors.append("messages: tool_use ids must be unique")
    if not isinstance(body.get("max_tokens"), int) or body["max_tokens"] < 1:
        errors.append("max_tokens: must be an integer of at least 1")
    system = body.get("system")
    if isinstance(system, list) and any(not b.get("text") for b in system):
        errors.append("system: text content blocks must be non-empty")
    for name in ("temperature", "top_p"):
        if name in body and not 0.0 <= body[name] <= 1.0:
            errors.append(f"{name}: must be between 0 and 1")
    return errors


def check(entry: dict) -> list[str]:
    """Every reason the real API would refuse this captured request."""
    errors = []
    if entry.get("path", "").split("?")[0] != "/v1/messages":
        errors.append(f"path {entry.get('path')!r}: the Messages API is POST /v1/messages")
    headers = {k.lower(): v for k, v in entry.get("headers", {}).items()}
    if not headers.get("anthropic-version"):
        errors.append("header anthropic-version is required")
    if not headers.get("content-type", "").startswith("application/json"):
        errors.append("content-type must be application/json")
    body = entry["body"]
    try:
        force(ADAPTERS[body.get("stream") is True].validate_python(body))
    except pydantic.ValidationError as e:
        errors += [f"{'.'.join(map(str, err['loc']))}: {err['msg']}" for err in e.errors()]
    return errors + semantic_errors(body)


def good() -> dict:
    return {
        "path": "/v1/messages",
        "headers": {"content-type": "application/json", "anthropic-version": "2023-06-01"},
        "body": {
            "model": "m",
            "max_tokens": 64,
            "system": [{"type": "text", "text": "Be brief."}],
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "Weather?"}]},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "w", "input": {}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "sun"}]},
            ],
        },
    }


def controls() -> list[str]:
    """The validator must accept a good request and refuse each broken one."""
    failures = []
    if check(good()):
        failures.append(f"the good control was refused: {check(good())}")
    breakages = {
        "no max_tokens": lambda b: b.pop("max_tokens"),
        "an unknown top-level field": lambda b: b.update(frequency_penalty=0.5),
        "an unknown block field": lambda b: b["messages"][0]["content"][0].update(name="x"),
        "a system role in messages": lambda b: b["messages"].insert(0, {"role": "system", "content": "s"}),
        "a tool role": lambda b: b["messages"].append({"role": "tool", "content": "x"}),
        "max_tokens as a string": lambda b: b.update(max_tokens="64"),
        "two user messages in a row": lambda b: b["messages"].append({"role": "user", "content": "again"}),
        "a first assistant message": lambda b: b["messages"].insert(0, {"role": "assistant", "content": "hi"}),
        "an orphan tool_result": lambda b: b["messages"][2]["content"][0].update(tool_use_id="toolu_9"),
        "an unanswered tool_use": lambda b: b["messages"].pop(),
        "an empty text block": lambda b: b["messages"][0]["content"][0].update(text=""),
        "an OpenAI tool_calls field": lambda b: b["messages"][1].update(tool_calls=[]),
    }
    for name, breaking in breakages.items():
        entry = good()
        breaking(entry["body"])
        if not check(entry):
            failures.append(f"the control with {name} was accepted")
    return failures


def main() -> int:
    failures = controls()
    for f in failures:
        print(f"CONTROL FAILED: {f}")
    total = bad = streamed = with_tools = multi_system = 0
    for path in sys.argv[1:]:
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                entry = json.loads(line)
                total += 1
                body = entry["body"]
                streamed += body.get("stream") is True
                with_tools += any(
                    b.get("type") == "tool_result"
                    for m in body.get("messages", [])
                    for b in blocks(m.get("content", []))
                )
                multi_system += isinstance(body.get("system"), list) and len(body["system"]) > 1
                errors = check(entry)
                if errors:
                    bad += 1
                    if bad <= 10:
                        print(f"{path}:{n}: {len(errors)} error(s): {errors[:5]}")
    print(
        f"anthropic SDK {anthropic.__version__}, pydantic {pydantic.VERSION}: "
        f"{total} request(s) checked ({streamed} streamed, {with_tools} with tool results, "
        f"{multi_system} with several system blocks), {bad} refused; "
        f"{13 - len(failures)} of 13 validator controls behaved"
    )
    return 1 if failures or bad or total == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
