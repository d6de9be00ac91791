"""Reads one streamed chat completion with the official OpenAI Python SDK
and prints, as one JSON line, what the SDK made of it: the text and the
finish reason it returned, or the class of the exception it raised.

The check of continuity-bench's `openai-sdk` client profile
(tests/it/client_profiles.rs) runs it against the harness's own upstreams
and compares. Usage: read_stream.py BASE_URL MESSAGE
"""

import json
import sys

import openai


def main() -> None:
    base_url, message = sys.argv[1], sys.argv[2]
    client = openai.OpenAI(
        base_url=base_url, api_key="sk-local-dummy", max_retries=0, timeout=30.0
    )
    text, finish = [], None
    try:
        stream = client.chat.completions.create(
            model="continuity-sim",
            messages=[{"role": "user", "content": message}],
            stream=True,
            stream_options={"include_usage": True},
        )
        for chunk in stream:
            if chunk.choices:
                choice = chunk.choices[0]
                if choice.delta is not None and isinstance(choice.delta.content, str):
                    text.append(choice.delta.content)
                if choice.finish_reason:
                    finish = choice.finish_reason
    except Exception as exc:  # the verdict is whether it raises, and what
        print(json.dumps({"raised": type(exc).__name__, "text": "".join(text)}))
        return
    print(json.dumps({"raised": None, "text": "".join(text), "finish_reason": finish}))


if __name__ == "__main__":
    main()
