"""`arena judge-bench`: a judge against human labels, from JSONL or a Debatrix-style folder."""
from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest

from arena import transcript
from judges.bench import load_dataset, metrics, stage_at
from tests.fakes.openai_server import Reply
from tests.test_cli import assert_user_error, invoke, snapshot

# Human label and the judge's scripted answer per debate: d6's answers never parse, so it fails.
CASES = {"d1": ("pro", "pro"), "d2": ("pro", "con"), "d3": ("con", "con"), "d4": ("con", "con"),
         "d5": ("tie", "pro"), "d6": ("con", None)}
EXPECTED = {
    "items": 6, "judged": 5, "failed": 1, "accuracy": 0.6,
    # labels pro,pro,con,con,tie; outcomes pro,con,con,con,pro. p_o = 0.6; p_e = .4·.4 + .4·.6 + .2·0 = .4
    "kappa": pytest.approx((0.6 - 0.4) / (1 - 0.4)),
    "confusion": {"pro": {"pro": 1, "con": 1, "tie": 0}, "con": {"pro": 0, "con": 2, "tie": 0},
                  "tie": {"pro": 1, "con": 0, "tie": 0}},
}
ORDER = ["pro", "con", "pro", "con", "con", "pro"]
STAGES_6 = ["constructive"] * 2 + ["rebuttal"] * 2 + ["summary"] * 2


def workspace(path: Path, api_base: str, runs: int = 3) -> Path:
    path.mkdir()
    (path / "arena.toml").write_text(
        '[llm]\nbackoff_s = 0.01\nretries = 0\nschema_retries = 0\n[search]\nprovider = "offline"\n'
        f'[[judges]]\nname = "j"\nkind = "single"\nmodel = "openai/judge"\napi_base = "{api_base}"\nruns = {runs}\n'
        '[judges.options]\noverall_ties = true\n', encoding="utf-8")
    return path


def responder(body: dict):
    """The verdict scripted for the debate whose motion is in the prompt."""
    text = body["messages"][0]["content"]
    item = re.search(r"Motion: Motion (d\d)", text).group(1)
    overall = CASES[item][1]
    if overall is None:
        return "I cannot decide."
    return json.dumps({"rationale": "Because.", "argument": overall, "source": "tie", "language": overall,
                       "overall": overall})


def write_jsonl(path: Path) -> Path:
    lines = [{"id": item, "motion": f"Motion {item}" if item != "d2" else {"text": f"Motion {item}",
                                                                         "category": "policy"},
              "speeches": [{"side": side, "stage": stage, "text": f"{item} speech {k} for {side}"}
                           for k, (side, stage) in enumerate(zip(ORDER, STAGES_6))],
              "label": label} for item, (label, _) in CASES.items()]
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    return path


GOLD = {"pro": "0", "con": "1", "tie": "0.5"}


def write_folder(root: Path) -> Path:
    (root / "motions").mkdir(parents=True)
    (root / "speeches").mkdir()
    (root / "gold.csv").write_text("id,label\n" + "".join(f"{item},{GOLD[label]}\n"
                                                          for item, (label, _) in CASES.items()), encoding="utf-8")
    for item in CASES:
        (root / "motions" / f"{item}.yaml").write_text(
            f"motion: Motion {item}\npro_side: [Alice, Ann]\ncon_side: Bob\ninfo_slide: A slide.\n"
            "speech_order: [Alice, Bob, pro, con, Bob, Ann]\n", encoding="utf-8")
        names = ["Alice", "Bob", "Ann", "Bob", "Bob", "Alice"]
        (root / "speeches" / f"{item}.yaml").write_text(
            "".join(f"- debater_name: {name}\n  content: {item} speech {k} for {side}\n"
                    for k, (name, side) in enumerate(zip(names, ORDER))), encoding="utf-8")
    return root


@pytest.mark.parametrize("layout", ["jsonl", "folder"])
def test_judge_bench_scores_the_judge_against_the_labels(tmp_path, fake_llm, layout):
    ws = workspace(tmp_path / "ws", fake_llm.api_base)
    dataset = write_jsonl(tmp_path / "bench.jsonl") if layout == "jsonl" else write_folder(tmp_path / "bench")
    fake_llm.responder = responder
    result = invoke("judge-bench", dataset, "--judge", "j", "--format", "json", "-w", ws)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert {k: data[k] for k in EXPECTED} == EXPECTED
    assert (data["judge"], data["runs"], data["simulated"]) == ("j", 3, False)
    assert [(r["id"], r["label"], r["outcome"], r["failed_runs"]) for r in data["results"]] == [
        (item, label, answer, 3 if answer is None else 0) for item, (label, answer) in CASES.items()]
    assert len(fake_llm.requests) == 3 * len(CASES)  # R runs per debate

    # The judge read each debate in speaking order with the sides and stages the layout gives.
    prompt = next(r.body["messages"][0]["content"] for r in fake_llm.requests if "Motion d1" in
                  r.body["messages"][0]["content"])
    assert [(side, stage, body) for side, stage, body in transcript.split(prompt)] == [
        (side, stage, f"d1 speech {k} for {side}") for k, (side, stage) in enumerate(zip(ORDER, STAGES_6))]

    # Nothing but the ledger and cache is written: no matches, no verdicts.
    db = sqlite3.connect(ws / "arena.db")
    assert db.execute("SELECT COUNT(*) FROM matches").fetchone()[0] == 0
    assert db.execute("SELECT COUNT(*) FROM verdicts").fetchone()[0] == 0
    assert set(db.execute("SELECT match_id, judge FROM calls")) == {(f"bench:{item}", "j") for item in CASES}
    db.close()


def test_judge_bench_table(tmp_path, fake_llm):
    ws = workspace(tmp_path / "ws", fake_llm.api_base, runs=1)
    fake_llm.responder = responder
    result = invoke("judge-bench", write_jsonl(tmp_path / "b.jsonl"), "--judge", "j", "-w", ws)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == f"judge 'j' on {tmp_path / 'b.jsonl'}: 6 debates, 5 judged, 1 failed"
    assert lines[1] == "accuracy 0.600  kappa 0.333"
    assert [line.split() for line in lines[3:]] == [["human/judge", "pro", "con", "tie"], ["pro", "1", "1", "0"],
                                                    ["con", "0", "2", "0"], ["tie", "1", "0", "0"]]


def test_a_majority_of_runs_decides_and_one_failed_run_fails_the_item(tmp_path, fake_llm):
    ws = workspace(tmp_path / "ws", fake_llm.api_base)

    def dataset(text: str) -> Path:  # a new text each time, so no run is answered from the cache
        path = tmp_path / f"{text}.jsonl"
        path.write_text(json.dumps({"id": "d1", "motion": "Motion d1", "speeches": [{"side": "pro", "text": text}],
                                    "label": "con"}) + "\n", encoding="utf-8")
        return path

    verdict = {"rationale": "R.", "argument": "con", "source": "con", "language": "con"}
    fake_llm.script(*(json.dumps({**verdict, "overall": o}) for o in ("con", "pro", "con")))
    data = json.loads(invoke("judge-bench", dataset("x"), "--judge", "j", "--format", "json", "-w", ws).stdout)
    assert (data["accuracy"], data["results"][0]["score_pro"], data["results"][0]["score_con"]) == (1.0, 1.0, 2.0)

    fake_llm.script(json.dumps({**verdict, "overall": "con"}), Reply(status=400, content="bad request"))
    path = dataset("y")
    data = json.loads(invoke("judge-bench", path, "--judge", "j", "--format", "json", "-w", ws).stdout)
    assert (data["judged"], data["failed"], data["accuracy"], data["kappa"]) == (0, 1, None, None)


# --- loading and metrics as functions -----------------------------------------------------------------

def test_stages_by_position():
    assert [stage_at(k, 6) for k in range(6)] == STAGES_6
    assert [stage_at(k, 3) for k in range(3)] == ["constructive", "rebuttal", "summary"]
    assert [stage_at(k, 4) for k in range(4)] == ["constructive", "constructive", "rebuttal", "summary"]


def test_jsonl_motion_object_and_default_stages(tmp_path):
    path = tmp_path / "b.jsonl"
    path.write_text(json.dumps({"id": 7, "motion": {"text": "M", "category": "fact", "info_slide": "S"},
                                "speeches": [{"side": "con", "text": "a"}, {"side": "pro", "text": "b"}],
                                "label": "tie"}) + "\n", encoding="utf-8")
    (item,) = load_dataset(path, language="zh")
    assert (item.id, item.label) == ("7", "tie")
    m = item.view.motion
    assert (m.text, m.category, m.info_slide, m.language) == ("M", "fact", "S", "zh")
    assert [(s.side, s.stage) for s in item.view.speeches] == [("con", "constructive"), ("pro", "rebuttal")]


def test_metrics_exclude_failed_items():
    out = metrics(["pro", "con", "tie"], ["pro", None, "con"])
    assert (out["items"], out["judged"], out["failed"], out["accuracy"]) == (3, 2, 1, 0.5)
    assert out["confusion"]["tie"] == {"pro": 0, "con": 1, "tie": 0}


# --- bad datasets: exit 2, naming the file and line or item, nothing written, no call made -------------

def jsonl_case(line: dict | str):
    def write(root: Path) -> Path:
        good = {"id": "ok", "motion": "M", "speeches": [{"side": "pro", "stage": "summary", "text": "t"}],
                "label": "pro"}
        bad = line if isinstance(line, str) else json.dumps({**good, "id": "bad", **line})
        (root / "b.jsonl").write_text(json.dumps(good) + "\n" + bad + "\n", encoding="utf-8")
        return root / "b.jsonl"
    return write


def folder_case(path: str, text: str):
    def write(root: Path) -> Path:
        write_folder(root / "bench")
        target = root / "bench" / path
        if text is None:
            target.unlink()
        else:
            target.write_text(text, encoding="utf-8")
        return root / "bench"
    return write


BAD = [
    pytest.param(jsonl_case("{not json"), ("b.jsonl:2", "not valid JSON"), id="jsonl-bad-json"),
    pytest.param(jsonl_case({"label": "draw"}), ("b.jsonl:2", "'label'", '"draw"'), id="jsonl-unknown-label"),
    pytest.param(jsonl_case({"id": "ok"}), ("b.jsonl:2", "repeated id 'ok'", "line 1"), id="jsonl-repeated-id"),
    pytest.param(jsonl_case({"speeches": [{"side": "gov", "text": "t"}]}),
                 ("b.jsonl:2", "speeches[0]", "unknown side \"gov\""), id="jsonl-unknown-side"),
    pytest.param(jsonl_case({"speeches": [{"side": "pro", "stage": "opening", "text": "t"}]}),
                 ("b.jsonl:2", "speeches[0]", "unknown stage"), id="jsonl-unknown-stage"),
    pytest.param(jsonl_case({"motion": {"txt": "M"}}), ("b.jsonl:2", "motion", "unknown key 'txt'"),
                 id="jsonl-motion-key"),
    pytest.param(jsonl_case({"winner": "pro"}), ("b.jsonl:2", "unknown key 'winner'"), id="jsonl-unknown-key"),
    pytest.param(folder_case("speeches/d3.yaml", None), ("speeches/d3.yaml", "no such file", "'d3'"),
                 id="folder-missing-speeches"),
    pytest.param(folder_case("motions/d2.yaml", "motion: [unclosed\n"),
                 ("motions/d2.yaml", "not valid YAML", "line 2"), id="folder-bad-yaml"),
    pytest.param(folder_case("speeches/d1.yaml", "".join(f"- debater_name: {name}\n  content: s\n"
                                                         for name in ["Alice", "Eve", "Ann", "Bob", "Bob", "Ann"])),
                 ("speeches/d1.yaml", "item 2 (line 3)", "'Eve'", "neither pro_side nor con_side"),
                 id="folder-unknown-debater"),
    pytest.param(folder_case("speeches/d1.yaml", "".join(f"- debater_name: Alice\n  content: s{k}\n"
                                                         for k in range(6))),
                 ("speeches/d1.yaml", "item 2 (line 3)", "speaks for pro", "speech_order[1]", "says con"),
                 id="folder-order-mismatch"),
    pytest.param(folder_case("speeches/d1.yaml", "- debater_name: Alice\n  content: a\n"),
                 ("speeches/d1.yaml", "1 speeches", "speech_order", "motions/d1.yaml", "names 6"),
                 id="folder-count-mismatch"),
    pytest.param(folder_case("gold.csv", "id,label\nd1,0\nd2,2\n"),
                 ("gold.csv:3", "'2'", "0 (Pro won), 1 (Con won) or 0.5 (tie)"), id="folder-unknown-label"),
    pytest.param(folder_case("gold.csv", "id,winner\nd1,0\n"), ("gold.csv", "line 1", "'label'"),
                 id="folder-no-label-column"),
    pytest.param(folder_case("motions/d1.yaml", "motion: M\npro_side: [A]\ncon_side: [A]\n"),
                 ("motions/d1.yaml", "'A' is on both"), id="folder-debater-on-both-sides"),
]


@pytest.mark.parametrize("write, fragments", BAD)
def test_bad_dataset_exits_2_naming_the_file(tmp_path, fake_llm, write, fragments):
    ws = workspace(tmp_path / "ws", fake_llm.api_base)
    dataset = write(tmp_path)
    assert invoke("judge-bench", dataset, "--judge", "nope", "-w", ws).exit_code == 2  # first open done
    before = snapshot(ws)
    assert_user_error(invoke("judge-bench", dataset, "--judge", "j", "-w", ws), *fragments)
    assert snapshot(ws) == before
    assert fake_llm.requests == []


def test_unknown_judge_and_missing_dataset_exit_2(tmp_path, fake_llm):
    ws = workspace(tmp_path / "ws", fake_llm.api_base)
    assert_user_error(invoke("judge-bench", write_jsonl(tmp_path / "b.jsonl"), "--judge", "nope", "-w", ws),
                      "--judge: unknown judge 'nope'")
    assert_user_error(invoke("judge-bench", tmp_path / "missing.jsonl", "--judge", "j", "-w", ws), "missing.jsonl")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n", encoding="utf-8")
    assert_user_error(invoke("judge-bench", empty, "--judge", "j", "-w", ws), "empty.jsonl", "no debates")
