"""The judge's client, run inside the judge's grader container: one Messages API call, one JSON line out.

Why so little: the host builds the exact request (bench/grading/judge_prompt.py) and
parses the answer; this only carries the request to the one address the container can
reach (the scripted endpoint's or the credential proxy's loopback) and prints what came
back. It holds no credential: it sends a placeholder ``x-api-key`` that the proxy's
injector replaces with the real one. It runs from the harness wheel on PYTHONPATH, so it
uses the standard library only::

    python3 -m bench.judge_client JOB.json

JOB is ``{"url": ..., "body": {...}, "timeout_s": N, "attempts": N}``. Overloaded or
failing providers (429, 5xx, a refused or dropped connection) are retried with backoff
within ``timeout_s``. The one line printed on stdout is ``{"ok": true, "text": ...,
"stop_reason": ..., "usage": ...}`` or ``{"ok": false, "error": ...}``; the exit status
is 0 either way, so a missing line means the client itself broke.
"""

from __future__ import annotations

import json
import sys
import time
import urllib.error
import urllib.request

PLACEHOLDER = "bench-judge-placeholder"
API_VERSION = "2023-06-01"
RETRIED = {429, 500, 502, 503, 504, 529}
ANSWER_MAX = 1 << 20  # bytes of a response read; a judge's JSON object is a few hundred


def call(url: str, body: dict, timeout_s: float, attempts: int = 3) -> dict:
    """The outcome of one judge call, retried on transient failures until attempts or the wall clock run out."""
    deadline = time.monotonic() + timeout_s
    data = json.dumps(body).encode()
    error = "no attempt was made"
    for attempt in range(1, attempts + 1):
        left = deadline - time.monotonic()
        if left <= 0:
            break
        request = urllib.request.Request(f"{url.rstrip('/')}/v1/messages", data=data, method="POST", headers={
            "content-type": "application/json", "anthropic-version": API_VERSION, "x-api-key": PLACEHOLDER})
        try:
            with urllib.request.urlopen(request, timeout=left) as response:
                return answer(json.loads(response.read(ANSWER_MAX)), attempt)
        except urllib.error.HTTPError as exc:
            error = f"HTTP {exc.code} from the judge's endpoint: {exc.read(600).decode('utf-8', 'replace')}"
            if exc.code not in RETRIED:
                break
        except (OSError, ValueError) as exc:  # refused, reset, timed out, or not JSON
            error = f"the judge's endpoint did not answer: {type(exc).__name__}: {exc}"
        time.sleep(min(2 ** attempt, max(0.0, deadline - time.monotonic())))
    return {"ok": False, "error": error}


def answer(response: dict, attempts: int) -> dict:
    """The text blocks of a Messages response, joined; its stop reason and usage as reported."""
    blocks = response.get("content") if isinstance(response, dict) else None
    if not isinstance(blocks, list):
        return {"ok": False, "error": f"the judge's endpoint sent no content: {json.dumps(response)[:600]}"}
    text = "".join(b.get("text", "") for b in blocks if isinstance(b, dict) and b.get("type") == "text")
    return {"ok": True, "text": text, "stop_reason": response.get("stop_reason"), "usage": response.get("usage"),
            "model": response.get("model"), "attempts": attempts}


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    with open(args[0], encoding="utf-8") as handle:
        job = json.load(handle)
    outcome = call(job["url"], job["body"], float(job["timeout_s"]), int(job.get("attempts", 3)))
    print(json.dumps(outcome), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
