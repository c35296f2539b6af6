"""The test suite's budget: its wall time, the time per test file and the slowest tests, from pytest's own report.

Runs the README's test command's pytest invocation (its `-n auto` included, when it has one) in a process of its
own, with this module loaded as a pytest plug-in that records the duration pytest measured for each phase
(setup, call, teardown) of each test (`report.duration`, as `--durations` prints it; under pytest-xdist the
workers' reports reach the controller, which records them). Then prints:

  1. the wall time beside the sum of every test's time, the parallel speed-up (sum / wall) beside the number of
     worker processes;
  2. the time per test file (setup + call + teardown, the share of the sum, the slowest test of the file);
  3. the slowest tests (25 unless --top) with their setup and call times.

A session- or module-scoped fixture's build is counted in the setup of the first test that uses it (per worker).
Timing stays out of the tests themselves: nothing here changes what a test does.

Run:
    .venv/bin/python benchmarks/suite.py                         # the whole suite, as the README runs it
    .venv/bin/python benchmarks/suite.py tests/arena/app/people/test_ballots.py   # a subset: any pytest arguments
    .venv/bin/python benchmarks/suite.py --workers 1 -k ballots  # -n 1 instead of the README's -n
    .venv/bin/python benchmarks/suite.py --workers 0 ...         # no xdist (one process)
Options of its own: --workers N, --top K (slowest tests shown), --json PATH (the raw durations). Any other
argument goes to pytest. The exit code is pytest's.
"""
from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PLUGIN = "benchmarks.suite"  # this module, imported by the pytest process from ROOT
OUT_ENV = "ARENA_SUITE_TIMINGS"  # where the plug-in writes the durations (a JSON file)


# --- the plug-in, inside the pytest process ------------------------------------------------------------------

_phases: dict[str, dict[str, float]] = defaultdict(dict)
_outcomes: dict[str, str] = {}
_workers: dict[str, str] = {}  # test -> the xdist worker that ran it ("main" without xdist)


def pytest_runtest_logreport(report) -> None:
    """Every phase's duration, as pytest measured it (on the controller, the workers' reports too)."""
    _phases[report.nodeid][report.when] = _phases[report.nodeid].get(report.when, 0.0) + report.duration
    _workers[report.nodeid] = getattr(getattr(getattr(report, "node", None), "gateway", None), "id", "main")
    if report.when != "call" and report.failed:  # a fixture's setup or teardown failed: pytest's "error"
        _outcomes[report.nodeid] = "error"
    elif report.when == "call" or report.skipped:
        _outcomes.setdefault(report.nodeid, "xfailed" if hasattr(report, "wasxfail") and report.skipped
                             else "xpassed" if hasattr(report, "wasxfail") else report.outcome)


def pytest_sessionfinish(session) -> None:
    if hasattr(session.config, "workerinput"):  # an xdist worker: the controller records its reports
        return
    path = os.environ.get(OUT_ENV)
    if path:
        workers = getattr(session.config.option, "numprocesses", None)
        Path(path).write_text(json.dumps({"phases": _phases, "outcomes": _outcomes, "ran_on": _workers,
                                          "workers": workers}),
                              encoding="utf-8")


# --- the command line ----------------------------------------------------------------------------------------

def readme_pytest_args(readme: Path = ROOT / "README.md") -> list[str]:
    """The arguments after `-m pytest` in the README's test command (the last `&&`-part that runs pytest)."""
    for line in readme.read_text(encoding="utf-8").splitlines():
        for part in reversed(line.split("&&")):
            words = shlex.split(part)
            for i in range(len(words) - 1):
                if words[i] == "-m" and words[i + 1] == "pytest":
                    return words[i + 2:]
    raise SystemExit(f"{readme}: no `python -m pytest` command found")


def with_workers(args: list[str], workers: int | None) -> list[str]:
    """args with their -n / --numprocesses replaced by -n workers (kept as they are when workers is None)."""
    if workers is None:
        return args
    out, skip = [], False
    for word in args:
        if skip:
            skip = False
        elif word in ("-n", "--numprocesses"):
            skip = True
        elif not re.match(r"(-n|--numprocesses=)\S+$", word):
            out.append(word)
    return out + ["-n", str(workers)]


def parse_own(argv: list[str]) -> tuple[int | None, int, str | None, list[str]]:
    """(--workers, --top, --json, the rest for pytest)."""
    workers, top, out, rest = None, 25, None, []
    words = iter(argv)
    for word in words:
        name, eq, value = word.partition("=")
        if name in ("--workers", "--top", "--json"):
            value = value if eq else next(words, None)
            if value is None:
                raise SystemExit(f"{name} needs a value")
            if name == "--workers":
                workers = int(value)
            elif name == "--top":
                top = int(value)
            else:
                out = value
        elif word in ("-h", "--help"):
            print(__doc__)
            raise SystemExit(0)
        else:
            rest.append(word)
    return workers, top, out, rest


def file_of(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def seconds(value: float) -> str:
    return f"{value:.2f}"


def table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(str(c)) for c in column) for column in zip(header, *rows)]
    lines = [header, ["-" * w for w in widths], *rows]
    return "\n".join("  ".join(str(c).rjust(w) if i else str(c).ljust(w) for i, (c, w) in enumerate(zip(line, widths)))
                     for line in lines)


def report(data: dict, wall: float, top: int) -> str:
    phases, outcomes = data["phases"], data["outcomes"]
    total = {node: sum(p.values()) for node, p in phases.items()}
    tests_sum = sum(total.values())
    workers = data.get("workers")
    busy: dict[str, float] = defaultdict(float)
    for node, worker in data.get("ran_on", {}).items():
        busy[worker] += total.get(node, 0.0)
    busiest = max(busy.values(), default=0.0)
    processes = f"{workers} processes" if workers and workers > 1 else "1 process"
    counts: dict[str, int] = defaultdict(int)
    for outcome in outcomes.values():
        counts[outcome] += 1
    out = [f"tests: {len(phases)} ({', '.join(f'{n} {o}' for o, n in sorted(counts.items()))})",
           table(["figure", "seconds", "reference", "ratio"], [
               ["wall time (pytest's process: start-up and collection included)", seconds(wall),
                f"the sum of the tests' times {seconds(tests_sum)}",
                f"{tests_sum / wall:.2f}x (the speed-up, of {processes})" if wall else "-"],
               ["the busiest process's tests", seconds(busiest), f"the wall time {seconds(wall)}",
                f"{seconds(wall - busiest)} s outside tests (start-up, collection, waiting)"]]),
           ""]

    files: dict[str, dict] = {}
    for node, phase in phases.items():
        f = files.setdefault(file_of(node), {"tests": 0, "setup": 0.0, "call": 0.0, "teardown": 0.0,
                                             "slowest": ("", 0.0)})
        f["tests"] += 1
        for when in ("setup", "call", "teardown"):
            f[when] += phase.get(when, 0.0)
        if total[node] > f["slowest"][1]:
            f["slowest"] = (node.split("::", 1)[-1], total[node])
    rows = []
    for name, f in sorted(files.items(), key=lambda kv: -(kv[1]["setup"] + kv[1]["call"] + kv[1]["teardown"])):
        whole = f["setup"] + f["call"] + f["teardown"]
        slow_name, slow_s = f["slowest"]
        rows.append([name, str(f["tests"]), seconds(whole), f"{100 * whole / tests_sum:.1f}%" if tests_sum else "-",
                     seconds(f["setup"]), seconds(f["call"]), seconds(f["teardown"]),
                     f"{slow_name[:60]} {seconds(slow_s)}"])
    out += ["time per test file (setup + call + teardown):",
            table(["file", "tests", "total", "share", "setup", "call", "teardown", "its slowest test"], rows), ""]

    slowest = sorted(phases, key=lambda node: -total[node])[:top]
    out += [f"the {len(slowest)} slowest tests:",
            table(["test", "total", "setup", "call", "teardown", "outcome"],
                  [[node, seconds(total[node]), seconds(phases[node].get("setup", 0.0)),
                    seconds(phases[node].get("call", 0.0)), seconds(phases[node].get("teardown", 0.0)),
                    outcomes.get(node, "passed")] for node in slowest])]
    return "\n".join(out)


def main(argv: list[str]) -> int:
    workers, top, json_out, extra = parse_own(argv)
    args = with_workers(readme_pytest_args(), workers) + extra
    with tempfile.TemporaryDirectory() as tmp:
        timings = Path(json_out or Path(tmp) / "timings.json").resolve()
        command = [sys.executable, "-m", "pytest", *args, "-p", PLUGIN]
        env = {**os.environ, OUT_ENV: str(timings),
               "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
        print("$", shlex.join(["python", *command[1:]]), flush=True)
        started = time.perf_counter()
        code = subprocess.run(command, cwd=ROOT, env=env).returncode
        wall = time.perf_counter() - started
        if not timings.exists():
            print(f"pytest exited {code} before reporting any test", file=sys.stderr)
            return code or 1
        data = json.loads(timings.read_text(encoding="utf-8"))
    print()
    print(report(data, wall, top))
    return code


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
