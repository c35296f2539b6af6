"""A real OpenAI-compatible chat-completions HTTP server on 127.0.0.1, for tests.

Nothing inside litellm is patched: point a model ``openai/<name>`` at
``FakeOpenAI.api_base`` and the real client stack (litellm -> openai SDK ->
httpx/aiohttp) talks to this server over loopback.

    with FakeOpenAI() as llm:
        llm.script("first answer", "second answer")
        llm.faults.enqueue(Reply(status=429))          # next request gets a 429
        ... litellm.acompletion(model="openai/fake-model", api_base=llm.api_base,
                                api_key="sk-test", messages=[...])
        assert llm.requests[-1].body["messages"][0]["content"] == ...

Reply resolution, per request (in arrival order):
  1. one Reply is popped from ``faults`` (FIFO), if any is queued;
  2. if there is no fault, or the fault is a "pass-through" (status < 400 with
     neither ``content`` nor ``raw``, e.g. ``Reply(delay=2)``), the
     ``responder`` is consulted for the answer; a fault's delay is added to it;
  3. the reply is sent after its delay: ``raw`` verbatim, an OpenAI-style error
     JSON for status >= 400 (with the request's Authorization header appended to
     its message when ``echo_authorization`` is set, as careless servers do),
     otherwise a ``chat.completion`` object.
Every request is recorded in ``requests`` before it is answered, errors included.

A server of limited slots, as llama.cpp's (one request generated at a time, the others queued):

    FakeOpenAI(slots=1, tokens_per_s=50, prompt_tokens_per_s=500)

generates at most ``slots`` answers at once, each taking its prompt tokens / prompt_tokens_per_s plus its
completion tokens / tokens_per_s (on top of any Reply delay); a request waits in line (FIFO) for a slot. A
client that closes its connection while waiting or while its answer is generated is seen at once: the
request is dropped, its slot freed, and a ``Disconnect`` appended to ``disconnects`` (a cancelled call).
``busy_s`` is the time slots spent generating in all, and ``peak`` the most answers generated at once;
``most_in_flight`` is the most chat requests received and not yet answered at once (waiting in line
included): what a client sent the server at once, whatever the server did with them.

Two more of a real CPU server's ways, both off unless asked:

    FakeOpenAI(slots=1, tokens_per_s=600, prompt_tokens_per_s=100, prompt_cache=True, jitter=0.2)

prompt_cache: each slot keeps the last prompt (its messages' text) it evaluated, as llama.cpp's servers do, and a
request given a slot that holds its prompt takes no prompt time (so on one slot, of requests sent at once with one
prompt, only the first pays for it; on s slots, the first s); jitter: each answer's time is longer by up to this fraction of it, at random, as on a
machine whose other processes take the CPU now and then.

A provider's automatic prompt cache, as OpenAI reports it (``FakeOpenAI(automatic_cache=True)``; off by default): an
answer's ``usage.prompt_tokens_details.cached_tokens`` is, per model, the longest prefix of its prompt (its messages'
text) shared with an earlier request's, counted in the fake's tokens (words): 0 below ``CACHE_MIN`` (1,024), else
rounded down to a step of ``CACHE_STEP`` (128), never more than its prompt tokens. ``reported`` holds each answer's usage as
sent, in the order the answers were sent.

Anthropic's messages API too (``POST /v1/messages``; the model ``anthropic/<name>`` with ``api_base`` at
``FakeOpenAI.base_url``): the same responder answers, in Anthropic's shape (``content`` blocks, ``stop_reason``,
``usage.input_tokens``, ``output_tokens``, ``cache_read_input_tokens``, ``cache_creation_input_tokens``). As Anthropic
caches only up to a breakpoint a request marks (a content part with ``cache_control``), the prompt up to its last
breakpoint, when it has ``CACHE_MIN`` tokens or more, is a cache read when an earlier request to the model marked the
same, else written (cache_creation_input_tokens); ``input_tokens`` is the rest. (Whatever automatic_cache says:
Anthropic's cache is the one its requests mark.)

A server that trickles its answers, its headers at once and then one byte of the body every 0.5 s:

    FakeOpenAI(trickle_s=0.5)          # every answer (or Reply(trickle_s=0.5) for one)

so that a client's read timeout never fires while the answer takes minutes to arrive.
"""

from __future__ import annotations

import bisect
import dataclasses
import itertools
import json
import random
import select
import socket
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Optional, Union

__all__ = [
    "FakeOpenAI",
    "Recorded",
    "Reply",
    "Disconnect",
    "FaultQueue",
    "with_authorization",
    "messages_text",
    "last_user",
    "count_words",
    "cache_marks",
    "openai_cached",
    "CACHE_MIN",
    "CACHE_STEP",
]


# --------------------------------------------------------------------------- data


@dataclass
class Recorded:
    """One received HTTP request. ``headers`` keys are lower-cased."""

    path: str
    headers: dict
    body: dict


CACHE_MIN, CACHE_STEP = 1024, 128  # OpenAI's prompt cache: from 1,024 tokens, in steps of 128


def _common(a: str, b: str) -> int:
    """Length of the longest common prefix of a and b (a binary search of slice comparisons)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        mid = (low + high + 1) // 2
        if a[:mid] == b[:mid]:
            low = mid
        else:
            high = mid - 1
    return low


class _PrefixStore:
    """The prompts a model was sent, sorted, so that the longest prefix a new one shares with any is one with a
    neighbour."""

    def __init__(self) -> None:
        self.sent: dict[str, list[str]] = {}

    def shared(self, model: str, text: str, keep: bool = True) -> int:
        """Characters of text shared with the longest-sharing earlier prompt of model; text kept (keep)."""
        earlier = self.sent.setdefault(model, [])
        at = bisect.bisect_left(earlier, text)
        best = max((_common(text, earlier[i]) for i in (at - 1, at) if 0 <= i < len(earlier)), default=0)
        if keep:
            earlier.insert(at, text)
        return best


def openai_cached(shared_tokens: int, prompt_tokens: int) -> int:
    """OpenAI's rule: none below CACHE_MIN, else the shared tokens rounded down to a step of CACHE_STEP."""
    shared = min(shared_tokens, prompt_tokens)
    return 0 if shared < CACHE_MIN else shared - (shared - CACHE_MIN) % CACHE_STEP


@dataclass
class Reply:
    """A scripted answer (or fault).

    content:            assistant message text (for errors: the error message).
    status:             HTTP status; >= 400 sends an OpenAI-style error body.
    delay:              seconds to wait before answering (latency injection).
    raw:                if set, sent verbatim as the response body (malformed JSON...).
    prompt_tokens /
    completion_tokens:  usage numbers; default = whitespace-separated word counts.
    finish_reason:      choices[0].finish_reason.
    headers:            extra response headers.
    echo_authorization: on an error reply, append the request's Authorization header
                        to the message (a server that leaks the key it was sent).
    """

    content: Optional[str] = None
    status: int = 200
    delay: float = 0
    raw: Optional[str] = None
    prompt_tokens: Optional[int] = None
    completion_tokens: Optional[int] = None
    finish_reason: str = "stop"
    headers: dict = field(default_factory=dict)
    echo_authorization: bool = False
    trickle_s: float = 0  # > 0: the body sent one byte at a time, this many seconds apart, after the headers

    @property
    def is_passthrough(self) -> bool:
        return self.status < 400 and self.content is None and self.raw is None


@dataclass
class Disconnect:
    """A client that closed its connection before its answer was sent (FakeOpenAI with slots)."""

    body: dict
    phase: str  # "waiting" (in line for a slot) or "generating"
    at: float  # time.monotonic() when it was seen


class _Gone(Exception):
    """The client closed its connection."""


Responder = Callable[[dict], Union[str, Reply]]

DEFAULT_CONTENT = "This is a fake answer from the test double."


# ------------------------------------------------------------------------ helpers


def _content_text(content: Any) -> str:
    """Text of a message ``content`` (a string or a list of content parts)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict):
                if isinstance(part.get("text"), str):
                    parts.append(part["text"])
            elif isinstance(part, str):
                parts.append(part)
        return "\n".join(parts)
    return str(content)


def messages_text(body: dict) -> str:
    """All message contents of a chat-completions request body, joined by newlines."""
    return "\n".join(_content_text(m.get("content")) for m in body.get("messages") or [])


def last_user(body: dict) -> str:
    """Content of the last ``user`` message of a request body ('' if none)."""
    for m in reversed(body.get("messages") or []):
        if m.get("role") == "user":
            return _content_text(m.get("content"))
    return ""


def count_words(text: str) -> int:
    return len(text.split())


class FaultQueue:
    """Thread-safe FIFO of Replies, consumed one per request."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._q: deque = deque()

    def enqueue(self, *replies: Reply) -> None:
        for r in replies:
            if not isinstance(r, Reply):
                raise TypeError(f"faults.enqueue expects Reply objects, got {type(r).__name__}")
        with self._lock:
            self._q.extend(replies)

    def pop(self) -> Optional[Reply]:
        with self._lock:
            return self._q.popleft() if self._q else None

    def clear(self) -> None:
        with self._lock:
            self._q.clear()

    def __len__(self) -> int:
        with self._lock:
            return len(self._q)


# Shared by both fakes: OpenAI-ish names for HTTP error statuses.
_ERROR_KINDS = {
    400: ("invalid_request_error", "bad_request", "Bad request."),
    401: ("invalid_request_error", "invalid_api_key", "Incorrect API key provided."),
    403: ("invalid_request_error", "forbidden", "Forbidden."),
    404: ("invalid_request_error", "not_found", "Not found."),
    408: ("server_error", "timeout", "Request timed out."),
    429: ("requests", "rate_limit_exceeded", "Rate limit reached. Please retry later."),
    500: ("server_error", "internal_error", "The server had an error while processing your request."),
    502: ("server_error", "bad_gateway", "Bad gateway."),
    503: ("server_error", "service_unavailable", "The server is overloaded or not ready yet."),
    504: ("server_error", "gateway_timeout", "Gateway timeout."),
}


def with_authorization(message: str, reply: Reply, headers: dict) -> str:
    """The error message, with the request's Authorization header appended if the reply echoes it."""
    return f"{message} {headers.get('authorization', '')}".rstrip() if reply.echo_authorization else message


def openai_error_body(status: int, message: Optional[str] = None) -> dict:
    etype, code, default_msg = _ERROR_KINDS.get(
        status, ("server_error" if status >= 500 else "invalid_request_error", str(status), f"HTTP {status}")
    )
    return {"error": {"message": message or default_msg, "type": etype, "param": None, "code": code}}


# ------------------------------------------------------------------- base server


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False  # stop() must not wait for handlers sleeping in a delay
    allow_reuse_address = True
    # socketserver's default backlog is 5: more simultaneous connects are dropped and retried by the
    # client's TCP stack a second later, which would time the fake rather than the code under test.
    request_queue_size = 128


class _BaseFakeServer:
    """Common lifecycle + recording for the fake HTTP servers."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._requests: list[Recorded] = []
        self.faults = FaultQueue()
        self.errors: list[BaseException] = []  # exceptions raised by user callables
        self._local = threading.local()  # per handler thread: whether its request counts as in flight
        self._httpd: Optional[_Server] = None
        self._thread: Optional[threading.Thread] = None
        self._stopping = threading.Event()

    # -- lifecycle
    def start(self):
        if self._httpd is not None:
            return self
        self._stopping.clear()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format, *args):  # keep test output quiet
                pass

            def do_POST(self):
                fake._handle(self)

            def do_GET(self):
                fake._handle(self)

        self._httpd = _Server(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"{type(self).__name__}-{self.port}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        self._stopping.set()  # wake handlers sleeping in a delay
        httpd.shutdown()
        httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("server not started")
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # -- recording
    @property
    def requests(self) -> list[Recorded]:
        """Snapshot (copy) of all requests received so far, in arrival order."""
        with self._lock:
            return list(self._requests)

    @property
    def bodies(self) -> list[dict]:
        return [r.body for r in self.requests]

    def clear(self) -> None:
        """Forget recorded requests and queued faults."""
        with self._lock:
            self._requests.clear()
        self.faults.clear()

    def _record(self, rec: Recorded) -> None:
        with self._lock:
            self._requests.append(rec)

    # -- plumbing
    def _sleep(self, seconds: float) -> None:
        if seconds and seconds > 0:
            self._stopping.wait(seconds)

    def _send(self, handler: BaseHTTPRequestHandler, status: int, payload: Union[str, bytes],
              headers: Optional[dict] = None, trickle_s: float = 0) -> None:
        data = payload.encode("utf-8") if isinstance(payload, str) else payload
        try:
            handler.send_response(status)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", str(len(data)))
            handler.send_header("Connection", "close")
            for k, v in (headers or {}).items():
                handler.send_header(k, str(v))
            handler.end_headers()
            self._answered()
            if trickle_s > 0:  # a byte at a time: each read of the client's gets something before its timeout
                handler.wfile.flush()
                for i in range(len(data)):
                    if self._stopping.wait(trickle_s):
                        break
                    handler.wfile.write(data[i:i + 1])
                    handler.wfile.flush()
            else:
                handler.wfile.write(data)
            handler.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError):
            pass  # client gave up (e.g. its timeout fired during our delay)
        handler.close_connection = True

    @staticmethod
    def _read_request(handler: BaseHTTPRequestHandler) -> tuple[str, dict, dict, Optional[str]]:
        """-> (path, headers, body, parse_error)."""
        path = handler.path.split("?", 1)[0]
        headers = {k.lower(): v for k, v in handler.headers.items()}
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length) if length > 0 else b""
        if not raw:
            return path, headers, {}, None if handler.command == "GET" else "empty body"
        try:
            body = json.loads(raw.decode("utf-8"))
        except (ValueError, UnicodeDecodeError) as e:
            return path, headers, {}, f"invalid JSON body: {e}"
        if not isinstance(body, dict):
            return path, headers, {"_json": body}, "JSON body is not an object"
        return path, headers, body, None

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _answered(self) -> None:
        """A request answered (FakeOpenAI counts those in flight)."""


# ---------------------------------------------------------------- OpenAI server


class FakeOpenAI(_BaseFakeServer):
    """OpenAI-compatible ``POST /v1/chat/completions`` (also ``/chat/completions``)."""

    PATHS = ("/v1/chat/completions", "/chat/completions")
    ANTHROPIC_PATHS = ("/v1/messages",)

    def __init__(self, responder: Optional[Responder] = None, *, slots: Optional[int] = None,
                 tokens_per_s: Optional[float] = None, prompt_tokens_per_s: Optional[float] = None,
                 trickle_s: float = 0, prompt_cache: bool = False, jitter: float = 0,
                 automatic_cache: bool = False) -> None:
        super().__init__()
        self.automatic_cache = automatic_cache  # usage reports what OpenAI's prompt cache read (see the docstring)
        self._prefixes = _PrefixStore()  # per model, the prompts sent (OpenAI's automatic cache)
        self._marked: dict[str, set[str]] = {}  # per model, the prompts' marked prefixes written (Anthropic's cache)
        self.reported: list[dict] = []  # each answer's usage as sent, in the order sent
        self.responder: Responder = responder or (lambda body: DEFAULT_CONTENT)
        # What GET /v1/models lists (e.g. [{"id": "m", "max_model_len": 4096}], as vLLM answers); None: 404.
        self.models: Optional[list] = None
        self._ids = itertools.count(1)
        # Limited slots (see the module's docstring); None: every request answered at once, as before.
        self.slots = slots
        self.tokens_per_s = tokens_per_s
        self.prompt_tokens_per_s = prompt_tokens_per_s
        self.prompt_cache = prompt_cache  # the last prompt evaluated is not evaluated again (see the docstring)
        self.jitter = jitter  # each answer's time longer by up to this fraction, at random
        self._slot_prompts: list[Optional[str]] = [None] * (slots or 0)  # each slot's last prompt (prompt_cache)
        self._slot_busy = [False] * (slots or 0)
        self._random = random.Random()
        self.disconnects: list[Disconnect] = []
        self.busy_s = 0.0
        self.peak = 0
        self.trickle_s = trickle_s  # every answer's body trickled, a byte every trickle_s (see the docstring)
        self.in_flight = 0
        self.most_in_flight = 0
        self._line: deque = deque()  # tickets of requests waiting for a slot, first come first served
        self._generating = 0
        self._slot_free = threading.Condition(self._lock)

    @property
    def api_base(self) -> str:
        """What litellm's ``openai/<name>`` models take as ``api_base``."""
        return f"{self.base_url}/v1"

    def script(self, *contents: Union[str, Reply]) -> None:
        """Answer with the given contents in order, then keep repeating the last."""
        if not contents:
            raise ValueError("script() needs at least one content")
        items = list(contents)
        lock = threading.Lock()
        state = {"i": 0}

        def responder(body: dict) -> Union[str, Reply]:
            with lock:
                i = min(state["i"], len(items) - 1)
                state["i"] += 1
            return items[i]

        self.responder = responder

    # -- request handling
    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        path, headers, body, parse_error = self._read_request(handler)
        self._record(Recorded(path=path, headers=headers, body=body))

        if handler.command == "GET" and path in ("/v1/models", "/models") and self.models is not None:
            self._send(handler, 200, json.dumps({"object": "list", "data": self.models}))
            return
        if handler.command != "POST" or path not in self.PATHS + self.ANTHROPIC_PATHS:
            self._send(handler, 404, json.dumps(openai_error_body(404, f"Unknown path {handler.command} {path}")))
            return
        if parse_error:
            self._send(handler, 400, json.dumps(openai_error_body(400, parse_error)))
            return

        with self._lock:
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
        self._local.counted = True
        try:
            self._answer(handler, headers, body)
        finally:
            self._answered()

    def _answered(self) -> None:
        """This thread's request no longer counts as in flight: its answer is on its way (counted before the client
        can read it whole and send its next request), or it was dropped."""
        if getattr(self._local, "counted", False):
            self._local.counted = False
            with self._lock:
                self.in_flight -= 1

    def _answer(self, handler: BaseHTTPRequestHandler, headers: dict, body: dict) -> None:
        reply = self._resolve(body)
        if self.slots is not None and reply.status < 400 and reply.raw is None:
            try:
                self._generate(handler, body, reply)
            except _Gone:
                return
        else:
            self._sleep(reply.delay)

        extra = dict(reply.headers)
        if reply.status == 429:
            extra.setdefault("retry-after", "0")
        if reply.raw is not None:
            self._send(handler, reply.status, reply.raw, extra)
        elif reply.status >= 400:
            error = openai_error_body(reply.status, reply.content)
            error["error"]["message"] = with_authorization(error["error"]["message"], reply, headers)
            self._send(handler, reply.status, json.dumps(error), extra)
        else:
            path = handler.path.split("?", 1)[0]
            answer = (self._message(body, reply) if path in self.ANTHROPIC_PATHS else self._completion(body, reply))
            with self._lock:
                self.reported.append(answer["usage"])
            self._send(handler, reply.status, json.dumps(answer), extra, trickle_s=reply.trickle_s or self.trickle_s)

    def _resolve(self, body: dict) -> Reply:
        fault = self.faults.pop()
        if fault is not None and not fault.is_passthrough:
            return fault
        if body.get("stream"):
            return Reply(status=400, content="stream=true is not supported by FakeOpenAI",
                         delay=fault.delay if fault else 0)
        try:
            answer = self.responder(body)
        except Exception as e:  # surface responder bugs as a 500 and keep them for the test
            self.errors.append(e)
            answer = Reply(status=500, content=f"FakeOpenAI responder raised {type(e).__name__}: {e}")
        reply = answer if isinstance(answer, Reply) else Reply(content=str(answer))
        if fault is not None:
            reply = dataclasses.replace(reply, delay=reply.delay + fault.delay,
                                        headers={**fault.headers, **reply.headers})
        return reply

    # -- limited slots
    def _generate(self, handler: BaseHTTPRequestHandler, body: dict, reply: Reply) -> None:
        """Wait in line for a slot, then take the answer's time in it; _Gone when the client leaves meanwhile."""
        ticket = object()
        with self._lock:
            self._line.append(ticket)
        try:
            with self._lock:
                while self._line[0] is not ticket or self._generating >= self.slots:
                    self._slot_free.wait(0.02)
                    if self._stopping.is_set():
                        raise _Gone()
                    if self._gone(handler):
                        self._left(body, "waiting")
                with_ticket = self._line.popleft()
                assert with_ticket is ticket
                ticket = None
                self._generating += 1
                self.peak = max(self.peak, self._generating)
                text = messages_text(body)
                free = [i for i, busy in enumerate(self._slot_busy) if not busy]
                slot = next((i for i in free if self._slot_prompts[i] == text), free[0])  # one holding its prompt
                cached = self.prompt_cache and self._slot_prompts[slot] == text
                self._slot_busy[slot], self._slot_prompts[slot] = True, text
                self._slot_free.notify_all()
        finally:
            if ticket is not None:  # left the line without a slot
                with self._lock:
                    self._line.remove(ticket)
                    self._slot_free.notify_all()
        started = time.monotonic()
        try:
            deadline = started + reply.delay + self._generation_s(body, reply, cached)
            while (left := deadline - time.monotonic()) > 0:
                if self._stopping.wait(min(left, 0.02)):
                    raise _Gone()
                if self._gone(handler):
                    with self._lock:
                        self._left(body, "generating")
        finally:
            with self._lock:
                self._generating -= 1
                self._slot_busy[slot] = False
                self.busy_s += time.monotonic() - started
                self._slot_free.notify_all()

    def _generation_s(self, body: dict, reply: Reply, cached: bool = False) -> float:
        """How long the answer takes to generate at this server's rates."""
        seconds = 0.0
        if self.prompt_tokens_per_s and not cached:  # cached: the slot holds the prompt's evaluation
            asked = reply.prompt_tokens if reply.prompt_tokens is not None else count_words(messages_text(body))
            seconds += asked / self.prompt_tokens_per_s
        if self.tokens_per_s:
            answered = (reply.completion_tokens if reply.completion_tokens is not None
                        else count_words(reply.content or ""))
            seconds += answered / self.tokens_per_s
        if self.jitter:
            with self._lock:
                seconds *= 1 + self._random.uniform(0, self.jitter)
        return seconds

    def _left(self, body: dict, phase: str) -> None:
        """Record a client gone (the lock held) and stop serving it."""
        self.disconnects.append(Disconnect(body, phase, time.monotonic()))
        raise _Gone()

    @staticmethod
    def _gone(handler: BaseHTTPRequestHandler) -> bool:
        """Whether the client closed its connection: its request was read whole, so a readable socket with
        nothing to read is the end of it."""
        conn = handler.connection
        try:
            readable, _, _ = select.select([conn], [], [], 0)
            return bool(readable) and not conn.recv(1, socket.MSG_PEEK)
        except (OSError, ValueError):
            return True

    def _completion(self, body: dict, reply: Reply) -> dict:
        content = reply.content if reply.content is not None else ""
        prompt_tokens = reply.prompt_tokens if reply.prompt_tokens is not None else count_words(messages_text(body))
        completion_tokens = (
            reply.completion_tokens if reply.completion_tokens is not None else count_words(content)
        )
        usage: dict = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        }
        if self.automatic_cache:
            text = messages_text(body)
            with self._lock:
                shared = self._prefixes.shared(str(body.get("model", "")), text)
            usage["prompt_tokens_details"] = {"cached_tokens": openai_cached(count_words(text[:shared]),
                                                                             prompt_tokens)}
        return {
            "id": f"chatcmpl-fake-{next(self._ids)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "fake-model"),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": reply.finish_reason,
                }
            ],
            "usage": usage,
        }

    def _message(self, body: dict, reply: Reply) -> dict:
        """An answer in the shape of Anthropic's messages API, its cache reads and writes as Anthropic counts them."""
        content = reply.content if reply.content is not None else ""
        parts = _anthropic_parts(body)
        text = "\n".join(t for t, _ in parts)
        prompt = reply.prompt_tokens if reply.prompt_tokens is not None else count_words(text)
        marks = [i for i, (_, marked) in enumerate(parts) if marked]
        read = written = 0
        if marks:
            prefix = "\n".join(t for t, _ in parts[:marks[-1] + 1])
            tokens = min(count_words(prefix), prompt)
            if tokens >= CACHE_MIN:
                with self._lock:
                    seen = self._marked.setdefault(str(body.get("model", "")), set())
                    if prefix in seen:
                        read = tokens
                    else:
                        written = tokens
                        seen.add(prefix)
        answered = reply.completion_tokens if reply.completion_tokens is not None else count_words(content)
        stop = {"stop": "end_turn", "length": "max_tokens"}.get(reply.finish_reason, reply.finish_reason)
        return {
            "id": f"msg_fake{next(self._ids)}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "fake-model"),
            "content": [{"type": "text", "text": content}],
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"input_tokens": prompt - read - written, "output_tokens": answered,
                      "cache_read_input_tokens": read, "cache_creation_input_tokens": written},
        }


def _anthropic_parts(body: dict) -> list[tuple[str, bool]]:
    """A messages-API request's text in order, system first: (text, whether it carries cache_control) per part."""
    out: list[tuple[str, bool]] = []
    system = body.get("system")
    for holder in ([{"content": system}] if system else []) + list(body.get("messages") or []):
        content = holder.get("content")
        if isinstance(content, str):
            out.append((content, False))
        elif isinstance(content, list):
            out += [(p.get("text", ""), "cache_control" in p) for p in content if isinstance(p, dict)]
    return out


def cache_marks(body: dict) -> list[tuple[int, int, dict]]:
    """Where a request marks a cache breakpoint: (message index, part index, its cache_control) of every part, of a
    message or of the system prompt (message index -1), that carries one."""
    found = []
    system = body.get("system")
    holders = [(-1, system)] + [(i, m.get("content")) for i, m in enumerate(body.get("messages") or [])]
    for i, content in holders:
        if isinstance(content, list):
            found += [(i, j, p["cache_control"]) for j, p in enumerate(content)
                      if isinstance(p, dict) and "cache_control" in p]
    return found
