"""Nothing a speech or a server writes can drive a terminal: what the commands print shows every control character
but newline and tab as its escape (arena.base.terminal), JSON carries the exact text, and the command line prints
through its one output function alone, so the rule holds for commands yet to come."""
from __future__ import annotations

import ast
import json
from pathlib import Path

from tests.support.fakes.openai_server import Reply
from tests.support.helpers import debate_responder, invoke, query, speech_text, stage_and_side, write_workspace
from tests.support.running import round_robin

CLI = Path(__file__).resolve().parents[4] / "arena" / "app" / "cli"
# A window title set (OSC ... BEL), the screen cleared (CSI 2J), a line written over (CR), a CSI as one C1 byte,
# the rest of the line reversed (RLO).
HOSTILE = "\x1b]0;pwned\x07 \x1b[2J Honest words.\rOVERWRITTEN \x9b31m red \u202e reversed"
VISIBLE = ("\\x1b]0;pwned\\x07", "\\x1b[2J", "Honest words.\\x0dOVERWRITTEN", "\\x9b31m", "\\u202e")
RAW = ("\x1b", "\x07", "\r", "\x9b", "\u202e")
# A server's error as the gateway keeps it: its first line (arena.gateway.retry.describe), so no CR.
SERVER_ERROR = "\x1b]0;pwned\x07 \x1b[2J server down \x9b31m red \u202e reversed"


def assert_shown_visibly(text: str, escaped: tuple[str, ...] = VISIBLE) -> None:
    """text holds no raw control character of HOSTILE, and each of them as its escape."""
    assert not [c for c in RAW if c in text], repr(text)
    for escape in escaped:
        assert escape in text, (escape, text)


def assert_error_shown_visibly(text: str) -> None:
    """As assert_shown_visibly, for SERVER_ERROR (no CR)."""
    assert_shown_visibly(text, tuple(e for e in VISIBLE if "\\x0d" not in e))


def played(tmp_path, fake_llm, responder) -> Path:
    """A workspace of alpha and beta on the fake server answering with responder, its round-robin run."""
    fake_llm.responder = responder
    path = round_robin(write_workspace(tmp_path / "ws", fake_llm.api_base, judge_runs=1), rounds=1)
    invoke("run", "-w", path)
    return path


def hostile_speeches(body: dict) -> str:
    """Every speech and every rationale ends with HOSTILE."""
    if body.get("response_format"):
        return json.dumps({"rationale": f"PRO carried it. {HOSTILE}", "argument": "pro", "source": "tie",
                           "language": "con", "overall": "pro"})
    stage, side = stage_and_side(body)
    return speech_text(f"SPEECH<{body['model']}|{stage}|{side}>") + " " + HOSTILE


def test_match_show_and_messages_show_a_speechs_control_characters_and_json_keeps_them(tmp_path, fake_llm):
    path = played(tmp_path, fake_llm, hostile_speeches)
    [(match_id,)] = query(path, "SELECT id FROM matches WHERE status = 'done' LIMIT 1")

    shown = invoke("match", "show", match_id, "-w", path)
    messages = invoke("match", "messages", match_id, "-w", path)

    assert shown.exit_code == 0 and messages.exit_code == 0, shown.output + messages.output
    assert_shown_visibly(shown.output)
    assert_shown_visibly(messages.output)
    assert shown.output.count("\\x1b[2J") == 6 + 1  # each of the six speeches, and the rationale
    assert "\n--- " in shown.output  # newlines are kept: the transcript keeps its layout
    as_json = json.loads(invoke("match", "show", match_id, "-w", path, "--format", "json").output)
    assert all(s["text"].endswith(HOSTILE) for s in as_json["speeches"])
    assert as_json["verdicts"][0]["rationale"] == f"PRO carried it. {HOSTILE}"
    sent = json.loads(invoke("match", "messages", match_id, "-w", path, "--format", "json").output)
    assert any(m["response"].endswith(HOSTILE) for m in sent)


def failing_with_escapes(body: dict):
    """Speeches and verdicts as debate_responder answers them, but beta's CON rebuttal fails: a 400 whose message
    is SERVER_ERROR (a plain-text body, as a proxy may send one)."""
    if stage_and_side(body) == ("rebuttal", "con") and body["model"] == "beta-model":
        return Reply(status=400, raw=SERVER_ERROR)
    return debate_responder()(body)


def test_a_servers_error_text_reaches_neither_the_runs_lines_nor_match_list_raw(tmp_path, fake_llm):
    fake_llm.responder = failing_with_escapes
    path = round_robin(write_workspace(tmp_path / "ws", fake_llm.api_base, judge_runs=1), rounds=1)

    run = invoke("run", "-w", path)
    listed = invoke("match", "list", "-w", path)

    assert run.exit_code == 1, run.output
    [failed] = [line for line in run.output.splitlines() if " failed: " in line]
    assert_error_shown_visibly(failed)
    assert_error_shown_visibly(listed.output)
    [(error,)] = query(path, "SELECT error FROM matches WHERE status = 'failed'")
    assert SERVER_ERROR in error  # stored as the server wrote it: only what is shown is escaped
    rows = json.loads(invoke("match", "list", "-w", path, "--format", "json").output)
    assert [r["error"] for r in rows if r["status"] == "failed"] == [error]


def test_a_servers_error_text_reaches_neither_check_nor_the_preflight_raw(tmp_path, fake_llm):
    def refusing_judge(body: dict):
        return Reply(status=400, raw=SERVER_ERROR) if body["model"] == "judge-model" else "ready"

    fake_llm.responder = refusing_judge
    path = round_robin(write_workspace(tmp_path / "ws", fake_llm.api_base, judge_runs=1, retries=0, checked=False),
                       rounds=1)

    checked = invoke("check", "j1", "-w", path)
    preflight = invoke("run", "-w", path)

    assert checked.exit_code == 1 and preflight.exit_code == 1, checked.output + preflight.output
    assert_error_shown_visibly(checked.output)
    assert "not usable" in preflight.output
    assert_error_shown_visibly(preflight.output)
    [row] = json.loads(invoke("check", "j1", "-w", path, "--format", "json").output)
    assert SERVER_ERROR in row["error"]


# --- the rule stays ---------------------------------------------------------------------------------------------

OUTPUT = {"common": {"echo", "echo_data"}}  # the CLI's output functions: the only callers of the writers below


def writes(call: ast.Call) -> bool:
    """A call that writes to a terminal: print, click.echo/secho/echo_via_pager, sys.stdout/stderr.write."""
    func = call.func
    if isinstance(func, ast.Name):
        return func.id == "print"  # echo(...) is common's, which the modules import (click's echo is refused below)
    if not isinstance(func, ast.Attribute):
        return False
    if isinstance(func.value, ast.Name) and func.value.id == "click":
        return func.attr in ("echo", "secho", "echo_via_pager", "get_text_stream")
    return func.attr in ("write", "writelines") and "std" in ast.unparse(func.value)


def unsafe_writes(source: str, module: str) -> list[str]:
    """Where a CLI module writes to the terminal outside the output functions allowed it."""
    found: list[str] = []

    def visit(node: ast.AST, inside: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ImportFrom) and child.module == "click":
                found.extend(f"{module}.py:{child.lineno}: from click import {alias.name}" for alias in child.names
                             if alias.name in ("echo", "secho", "echo_via_pager"))
            name = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) and not inside else inside
            if isinstance(child, ast.Call) and writes(child) and name not in OUTPUT.get(module, set()):
                found.append(f"{module}.py:{child.lineno}: {ast.unparse(child.func)}")
            visit(child, name)

    visit(ast.parse(source), "")
    return found


def test_the_command_line_prints_through_its_output_functions_alone():
    found = [hit for path in sorted(CLI.glob("*.py")) for hit in unsafe_writes(path.read_text(), path.stem)]
    assert found == [], "print through arena.app.cli.common.echo (text) or echo_data (JSON, CSV):\n" + "\n".join(found)


def test_the_rule_check_finds_each_kind_of_write():
    for source in ("click.echo(x)", "click.secho(x)", "print(x)", "sys.stderr.write(x)", "sys.stdout.write(x)",
                   "def show():\n    click.echo(x, err=True)", "from click import echo"):
        assert unsafe_writes(source, "matches"), source
    assert unsafe_writes("def echo(text):\n    click.echo(text)", "common") == []
    assert unsafe_writes("def table(rows):\n    click.echo(rows)", "common")
    assert unsafe_writes("echo(x)\necho_json(x)\nfile.write(x)", "matches") == []


def verdicts_failing_with_escapes(body: dict):
    """Speeches as debate_responder answers them; every judge's request a 400 whose message is SERVER_ERROR."""
    if body.get("response_format"):
        return Reply(status=400, raw=SERVER_ERROR)
    return debate_responder()(body)


def test_a_notebooks_printed_progress_shows_a_servers_error_visibly(tmp_path, fake_llm, capsys):
    import arena

    fake_llm.responder = verdicts_failing_with_escapes
    path = round_robin(write_workspace(tmp_path / "ws", fake_llm.api_base, judge_runs=1), rounds=1)
    with arena.open(path) as ws:
        ws.run(concurrency=1)  # the matches are played; their judging fails
        capsys.readouterr()
        ws.judge()  # its lines printed in the cell's output, the server's error among them

    printed = capsys.readouterr().out
    [failed, *_] = [line for line in printed.splitlines() if "server down" in line]
    assert_error_shown_visibly(failed)
