"""`arena judge-bench`: a judge against human labels, from JSONL, a Debatrix-style folder, or PanelBench's
DebateArt layout (with per-dimension labels)."""
from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest
import yaml

from arena.gateway import offline
from arena.domain import transcript
from judges.bench import BenchItem, dimension_scores, load_dataset, metrics, round_stages, stage_at
from tests.support.fakes.openai_server import Reply
from tests.support.helpers import assert_user_error, invoke, judge, new_workspace, snapshot

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


def workspace(path: Path, api_base: str, runs: int = 3, model: str = "openai/judge") -> Path:
    """Judge j (single, ties allowed) on the fake server, no retries; no entries, no arena.db yet. Its runs read the
    debates as held (swap_sides off): the scripted answers go by run, whatever the labels."""
    return new_workspace(path, llm={"backoff_s": 0.01, "retries": 0, "schema_retries": 0}, init=None,
                         judges=[judge("j", model=model, api_base=api_base, runs=runs,
                                       options={"overall_ties": True, "swap_sides": False})])


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


def edited(make, folder: str, path: str, text: str | None):
    """A dataset writer: make a good dataset in root/folder, then replace (None: delete) one file of it."""
    def write(root: Path) -> Path:
        make(root / folder)
        target = root / folder / path
        if text is None:
            target.unlink()
        else:
            target.write_text(text, encoding="utf-8")
        return root / folder
    return write


def folder_case(path: str, text: str | None):
    return edited(write_folder, "bench", path, text)


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
                 ("speeches/d1.yaml", "1 speech,", "speech_order", "motions/d1.yaml", "names 6"),
                 id="folder-count-mismatch"),
    pytest.param(folder_case("gold.csv", "id,label\nd1,0\nd2,2\n"),
                 ("gold.csv:3", "'2'", "0 (Pro won), 1 (Con won) or 0.5 (tie)"), id="folder-unknown-label"),
    pytest.param(folder_case("gold.csv", "id,winner\nd1,0\n"), ("gold.csv", "line 1", "'label'"),
                 id="folder-no-label-column"),
    pytest.param(folder_case("motions/d1.yaml", "motion: M\npro_side: [A]\ncon_side: [A]\n"),
                 ("motions/d1.yaml", "'A' is on both"), id="folder-debater-on-both-sides"),
]


def test_unknown_judge_and_missing_dataset_exit_2(tmp_path, fake_llm):
    ws = workspace(tmp_path / "ws", fake_llm.api_base)
    assert_user_error(invoke("judge-bench", write_jsonl(tmp_path / "b.jsonl"), "--judge", "nope", "-w", ws),
                      "--judge: unknown judge 'nope'")
    assert_user_error(invoke("judge-bench", tmp_path / "missing.jsonl", "--judge", "j", "-w", ws), "missing.jsonl")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n", encoding="utf-8")
    assert_user_error(invoke("judge-bench", empty, "--judge", "j", "-w", ws), "empty.jsonl", "no debates")


# --- PanelBench's DebateArt layout (gold/, motion/, speech/) --------------------------------------------

C, R, S = "constructive", "rebuttal", "summary"
# dart_id → (pro_side, con_side, speeches as (debater, side, stage) in speaking order): the stages are
# what the judge must see, by round (each side's first speech constructive, last summary, rebuttals between).
DEBATES = {
    3: (["Ann"], ["Bo"], [("Ann", "pro", C), ("Bo", "con", C), ("Ann", "pro", R), ("Bo", "con", R),
                          ("Ann", "pro", S), ("Bo", "con", S)]),
    12: (["Cy"], ["Di"], [("Di", "con", C), ("Cy", "pro", C), ("Di", "con", S), ("Cy", "pro", S)]),  # Con first
    57: (["Eve"], ["Fay"], [("Eve", "pro", C), ("Fay", "con", C)]),  # a side's only speech: its constructive
    1204: (["Gus", "Hal"], ["Ida"],  # ten speeches; a two-debater Pro team
           [("Gus", "pro", C), ("Ida", "con", C)]
           + [(name, side, R) for name, side in [("Hal", "pro"), ("Ida", "con"), ("Gus", "pro"), ("Ida", "con"),
                                                 ("Hal", "pro"), ("Ida", "con")]]
           + [("Gus", "pro", S), ("Ida", "con", S)]),
}
FINAL = {3: "0", 12: "1", 57: "0.5", 1204: "1"}
# Per-dimension labels, named as a DebateArt file may name them: "sources" and "legibility" are scored
# against the judge's source and language, "conduct" is judged by no arena judge. 57 has no sources row.
DIMENSION_ROWS = [(3, "argument", "0"), (12, "argument", "1"), (57, "argument", "0.5"), (1204, "argument", "1"),
                  (3, "sources", "0.5"), (12, "sources", "1"), (1204, "sources", "0.5"),
                  (3, "legibility", "0"), (12, "legibility", "0.5"), (57, "legibility", "0.5"),
                  (1204, "legibility", "1"), (3, "conduct", "0"), (12, "conduct", "0.5")]
# The judge's scripted verdict per debate: overall, argument, source, language.
ANSWERS = {3: ("pro", "pro", "tie", "pro"), 12: ("con", "con", "pro", "tie"), 57: ("pro", "tie", "con", "tie"),
           1204: ("pro", "pro", "tie", "pro")}


def write_debateart(root: Path, content=lambda dart_id, k, name, side: f"{dart_id}/{k} by {name}") -> Path:
    for sub in ("gold", "motion", "speech"):
        (root / sub).mkdir(parents=True)
    (root / "gold" / "final.csv").write_text(
        "dart_id,label,votes\n" + "".join(f"{i},{label},3\n" for i, label in FINAL.items()), encoding="utf-8")
    (root / "gold" / "dimension.csv").write_text(
        "dart_id,dimension,label\n" + "".join(f"{i},{d},{label}\n" for i, d, label in DIMENSION_ROWS),
        encoding="utf-8")
    (root / "motion" / "motion_list.txt").write_text("debateart_0003\tDebate 3\n", encoding="utf-8")  # ignored
    for dart_id, (pro, con, speeches) in DEBATES.items():
        order = [name for name, _, _ in speeches]
        if dart_id == 1204:
            order[4] = None  # Debatrix: any debater may give this speech; its debater_name says who did
        info = {"motion": f"Debate {dart_id} motion", "pro_side": [{"name": n} for n in pro],
                "con_side": [{"name": n} for n in con], "info_slide": "" if dart_id == 3 else f"Slide {dart_id}.",
                "speech_order": order}
        (root / "motion" / f"debateart_{dart_id:04d}.yml").write_text(yaml.safe_dump(info, sort_keys=False),
                                                                     encoding="utf-8")
        (root / "speech" / f"debateart_{dart_id:04d}.yml").write_text(yaml.safe_dump(
            [{"debater_name": name, "content": content(dart_id, k, name, side)}
             for k, (name, side, _) in enumerate(speeches)], sort_keys=False), encoding="utf-8")
    return root


def debateart_responder(body: dict) -> str:
    text = body["messages"][0]["content"]
    overall, argument, source, language = ANSWERS[int(re.search(r"Motion: Debate (\d+)", text).group(1))]
    return json.dumps({"rationale": "Because.", "argument": argument, "source": source, "language": language,
                       "overall": overall})


def seen(prompt: str) -> list[tuple[str, str, str]]:
    return [(side, stage, body) for side, stage, body in transcript.split(prompt)]


def expected_seen(dart_id: int) -> list[tuple[str, str, str]]:
    return [(side, stage, f"{dart_id}/{k} by {name}") for k, (name, side, stage) in enumerate(DEBATES[dart_id][2])]


def test_debateart_layout_scores_overall_and_per_dimension(tmp_path, fake_llm):
    ws = workspace(tmp_path / "ws", fake_llm.api_base, runs=1)
    fake_llm.responder = debateart_responder
    result = invoke("judge-bench", write_debateart(tmp_path / "DebateArt"), "--judge", "j", "--format", "json",
                    "-w", ws)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)

    # The judge read each debate in speaking order, sides from the debaters' names, stages by round.
    prompts = {int(re.search(r"Motion: Debate (\d+)", r.body["messages"][0]["content"]).group(1)):
               r.body["messages"][0]["content"] for r in fake_llm.requests}
    assert sorted(prompts) == sorted(DEBATES) and len(fake_llm.requests) == len(DEBATES)
    for dart_id in DEBATES:
        assert seen(prompts[dart_id]) == expected_seen(dart_id), dart_id
    assert "Slide 12." in prompts[12]
    # Unlike the arena's, DebateArt's second speaker reads the first before answering.
    assert not any("written independently" in p for p in prompts.values())

    # Overall: labels pro, con, tie, con; outcomes pro, con, pro, pro. p_o = 2/4;
    # p_e = P(pro)·P'(pro) + P(con)·P'(con) + P(tie)·P'(tie) = .25·.75 + .5·.25 + .25·0 = .3125.
    assert (data["items"], data["judged"], data["failed"], data["accuracy"]) == (4, 4, 0, 0.5)
    assert data["kappa"] == pytest.approx((0.5 - 0.3125) / (1 - 0.3125))
    assert [(r["id"], r["label"], r["outcome"]) for r in data["results"]] == [
        ("3", "pro", "pro"), ("12", "con", "con"), ("57", "tie", "pro"), ("1204", "con", "pro")]

    dims = data["dimensions"]
    assert list(dims) == ["argument", "sources", "legibility", "conduct"]  # the file's names, in its order
    assert {name: d["judge_dimension"] for name, d in dims.items()} == {
        "argument": "argument", "sources": "source", "legibility": "language", "conduct": None}
    # argument: labels pro, con, tie, con; judge pro, con, tie, pro. p_o = .75;
    # p_e = .25·.5 + .5·.25 + .25·.25 = .3125.
    assert {k: dims["argument"][k] for k in ("items", "judged", "failed", "accuracy")} == (
        {"items": 4, "judged": 4, "failed": 0, "accuracy": 0.75})
    assert dims["argument"]["kappa"] == pytest.approx((0.75 - 0.3125) / (1 - 0.3125))
    assert dims["argument"]["confusion"] == {"pro": {"pro": 1, "con": 0, "tie": 0},
                                             "con": {"pro": 1, "con": 1, "tie": 0},
                                             "tie": {"pro": 0, "con": 0, "tie": 1}}
    # sources (57 unlabelled): labels tie, con, tie; judge's source tie, pro, tie. p_o = 2/3;
    # p_e = P(tie)·P'(tie) = 2/3 · 2/3 = 4/9.
    assert (dims["sources"]["items"], dims["sources"]["judged"]) == (3, 3)
    assert dims["sources"]["accuracy"] == pytest.approx(2 / 3)
    assert dims["sources"]["kappa"] == pytest.approx((2 / 3 - 4 / 9) / (1 - 4 / 9))
    # legibility: labels pro, tie, tie, con; judge's language pro, tie, tie, pro. p_o = .75;
    # p_e = .25·.5 + .5·.5 + .25·0 = .375.
    assert dims["legibility"]["accuracy"] == 0.75
    assert dims["legibility"]["kappa"] == pytest.approx((0.75 - 0.375) / (1 - 0.375))
    # conduct: labelled on two debates, but the judge gives no such verdict.
    assert {k: dims["conduct"][k] for k in ("items", "judged", "failed", "accuracy", "kappa")} == (
        {"items": 2, "judged": 0, "failed": 0, "accuracy": None, "kappa": None})

    # Each result shows its labelled dimensions, label beside the judge's outcome.
    assert data["results"][0]["dimensions"] == {
        "argument": {"label": "pro", "outcome": "pro"}, "sources": {"label": "tie", "outcome": "tie"},
        "legibility": {"label": "pro", "outcome": "pro"}, "conduct": {"label": "pro", "outcome": None}}
    assert list(data["results"][2]["dimensions"]) == ["argument", "legibility"]

    table = invoke("judge-bench", tmp_path / "DebateArt", "--judge", "j", "-w", ws)  # answered from the cache
    assert table.exit_code == 0, table.output
    rows = [line.split() for line in table.stdout.splitlines()[-5:]]
    assert rows == [["dimension", "judged", "as", "items", "judged", "failed", "accuracy", "kappa"],
                    ["argument", "argument", "4", "4", "0", "0.750", "0.636"],
                    ["sources", "source", "3", "3", "0", "0.667", "0.400"],
                    ["legibility", "language", "4", "4", "0", "0.750", "0.600"],
                    ["conduct", "(not", "judged)", "2", "0", "0", "n/a", "n/a"]]


def test_debateart_with_an_offline_judge(tmp_path, monkeypatch):
    # Each debate's winner writes cogent prose and the loser hedges, so the simulated judge's overall
    # verdict follows the planted winner (Bradley–Terry on the estimated strengths, p > 0.999).
    winner = {3: "pro", 12: "con", 57: "pro", 1204: "pro"}
    cogent, hedged = "The evidence is clear, therefore we win because it matters.", "Maybe, perhaps, I feel."

    def content(dart_id, k, name, side):
        return f"{dart_id}/{k} by {name}. " + (cogent if side == winner[dart_id] else hedged)

    prompts = []
    respond = offline.respond

    def recording(model, strength, messages, **kw):
        prompts.append(messages[0]["content"])
        return respond(model, strength, messages, **kw)

    monkeypatch.setattr(offline, "respond", recording)
    ws = workspace(tmp_path / "ws", "", runs=3, model="offline/judge")
    result = invoke("judge-bench", write_debateart(tmp_path / "DebateArt", content), "--judge", "j",
                    "--format", "json", "-w", ws)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["simulated"] is True and len(prompts) == 3 * len(DEBATES)
    for dart_id in DEBATES:
        prompt = next(p for p in prompts if f"Motion: Debate {dart_id} motion" in p)
        assert [(side, stage, body.split(".")[0]) for side, stage, body in seen(prompt)] == (
            expected_seen(dart_id)), dart_id

    # Labels pro, con, tie, con against outcomes pro, con, pro, pro: as in the scripted test above.
    assert [r["outcome"] for r in data["results"]] == ["pro", "con", "pro", "pro"]
    assert (data["accuracy"], data["kappa"]) == (0.5, pytest.approx(3 / 11))
    # The simulated judge outputs argument, source and language; each labelled dimension scores the
    # per-debate outcomes the report lists.
    for name, d in data["dimensions"].items():
        rows = [r["dimensions"][name] for r in data["results"] if name in r["dimensions"]]
        assert {k: d[k] for k in ("items", "judged", "failed", "accuracy", "kappa", "confusion")} == (
            metrics([r["label"] for r in rows], [r["outcome"] for r in rows]) if name != "conduct" else
            {**metrics([r["label"] for r in rows], [None] * len(rows)), "failed": 0})
    assert all(r["dimensions"]["argument"]["outcome"] in ("pro", "con", "tie") for r in data["results"])


def test_debateart_dimension_outcome_is_the_majority_of_runs(tmp_path, fake_llm):
    root = tmp_path / "one"
    write_debateart(root)
    (root / "gold" / "final.csv").write_text("dart_id,label\n57,1\n", encoding="utf-8")
    (root / "gold" / "dimension.csv").write_text("dart_id,dimension,label\n57,Arguments,1\n", encoding="utf-8")
    ws = workspace(tmp_path / "ws", fake_llm.api_base)
    verdict = {"rationale": "R.", "source": "tie", "language": "tie", "overall": "con"}
    fake_llm.script(*(json.dumps({**verdict, "argument": a}) for a in ("pro", "con", "con")))
    data = json.loads(invoke("judge-bench", root, "--judge", "j", "--format", "json", "-w", ws).stdout)
    assert data["results"][0]["dimensions"] == {"Arguments": {"label": "con", "outcome": "con"}}
    assert (data["dimensions"]["Arguments"]["judge_dimension"], data["dimensions"]["Arguments"]["accuracy"]) == (
        "argument", 1.0)


def test_debateart_without_dimension_labels_reports_overall_only(tmp_path, fake_llm):
    root = write_debateart(tmp_path / "DebateArt")
    (root / "gold" / "dimension.csv").unlink()
    ws = workspace(tmp_path / "ws", fake_llm.api_base, runs=1)
    fake_llm.responder = debateart_responder
    data = json.loads(invoke("judge-bench", root, "--judge", "j", "--format", "json", "-w", ws).stdout)
    assert (data["accuracy"], "dimensions" in data, "dimensions" in data["results"][0]) == (0.5, False, False)


def test_round_stages():
    assert round_stages(["pro", "con"] * 3) == [C, C, R, R, S, S]
    assert round_stages(["con", "pro", "con", "pro"]) == [C, C, S, S]
    assert round_stages(["pro", "con"]) == [C, C]
    assert round_stages(["pro", "pro", "con"]) == [C, S, C]
    assert round_stages(["pro", "con"] * 5) == [C, C] + [R] * 6 + [S, S]


def test_dimension_scores_count_failed_debates_and_unjudged_dimensions():
    def item(i: str, **labels) -> BenchItem:
        return BenchItem(i, None, "pro", labels)

    items = [item("a", argument="pro", Conduct="con"), item("b", argument="con", Conduct="tie"),
             item("c", argument="con")]
    summary, per_item = dimension_scores(items, [{"argument": "pro"}, None, {"argument": "pro"}])
    assert {k: summary["argument"][k] for k in ("items", "judged", "failed", "accuracy", "judge_dimension")} == (
        {"items": 3, "judged": 2, "failed": 1, "accuracy": 0.5, "judge_dimension": "argument"})
    # Not judged: judged 0; failed counts only the debate the judge failed on.
    assert {k: summary["Conduct"][k] for k in ("items", "judged", "failed", "judge_dimension")} == (
        {"items": 2, "judged": 0, "failed": 1, "judge_dimension": None})
    assert per_item[1] == {"argument": {"label": "con", "outcome": None}, "Conduct": {"label": "tie", "outcome": None}}
    # A judge that failed on every debate gave no dimension at all: every item counts as failed.
    summary, _ = dimension_scores(items, [None, None, None])
    assert (summary["argument"]["failed"], summary["Conduct"]["failed"]) == (3, 2)


def debateart_case(path: str, text: str | None):
    return edited(write_debateart, "DebateArt", path, text)


def speeches(*names: str) -> str:
    return "".join(f"- debater_name: {name}\n  content: c\n" for name in names)


BAD_DEBATEART = [
    pytest.param(debateart_case("gold/final.csv", None), ("gold/final.csv", "no such file"), id="no-final"),
    pytest.param(debateart_case("motion/debateart_0057.yml", None),
                 ("motion/debateart_0057.yml", "no such file", "final.csv:4", "dart_id 57"), id="no-motion"),
    pytest.param(debateart_case("speech/debateart_1204.yml", None),
                 ("speech/debateart_1204.yml", "no such file", "dart_id 1204"), id="no-speech"),
    pytest.param(debateart_case("gold/final.csv", "dart_id,label\n3,0\n12,2\n"),
                 ("gold/final.csv:3", "label '2'", "0 (Pro won), 1 (Con won) or 0.5 (tie)"), id="final-bad-label"),
    pytest.param(debateart_case("gold/final.csv", "dart_id,label\nd3,0\n"),
                 ("gold/final.csv:2", "dart_id 'd3' is not a whole number"), id="final-bad-id"),
    pytest.param(debateart_case("gold/final.csv", "dart_id,label\n3,0\n03,1\n"),
                 ("gold/final.csv:3", "repeated dart_id 3", "line 2"), id="final-repeated-id"),
    pytest.param(debateart_case("gold/final.csv", "id,label\n3,0\n"), ("gold/final.csv", "line 1", "'dart_id'"),
                 id="final-no-dart-id-column"),
    pytest.param(debateart_case("gold/dimension.csv", "dart_id,dimension,label\n3,argument,0\n3,source,win\n"),
                 ("gold/dimension.csv:3", "label 'win'"), id="dimension-bad-label"),
    pytest.param(debateart_case("gold/dimension.csv", "dart_id,dimension,label\n99,argument,0\n"),
                 ("gold/dimension.csv:2", "dart_id 99 is not in", "final.csv"), id="dimension-unknown-debate"),
    pytest.param(debateart_case("gold/dimension.csv", "dart_id,dimension,label\n3,argument,0\n3,argument,1\n"),
                 ("gold/dimension.csv:3", "repeated dimension 'argument'", "line 2"), id="dimension-repeated"),
    pytest.param(debateart_case("gold/dimension.csv", "dart_id,label\n3,0\n"),
                 ("gold/dimension.csv", "line 1", "'dimension'"), id="dimension-no-column"),
    pytest.param(debateart_case("motion/debateart_0003.yml", "- motion: M\n"),
                 ("motion/debateart_0003.yml", "DebateInfo mapping", "got a list"), id="motion-not-mapping"),
    pytest.param(debateart_case("motion/debateart_0003.yml", "motion: M\npro_side: [Ann]\ncon_side: [{name: Bo}]\n"
                                                             "speech_order: [Ann, Bo]\n"),
                 ("motion/debateart_0003.yml", "pro_side[0]", "mapping with a non-empty 'name'"),
                 id="motion-side-not-debater-info"),
    pytest.param(debateart_case("motion/debateart_0003.yml", "motion: M\npro_side: [{name: Ann}]\n"
                                                             "con_side: [{name: Ann}]\nspeech_order: [Ann]\n"),
                 ("motion/debateart_0003.yml", "'Ann' is on both"), id="motion-debater-on-both-sides"),
    pytest.param(debateart_case("motion/debateart_0003.yml", "motion: M\npro_side: [{name: Ann}]\n"
                                                             "con_side: [{name: Bo}]\n"),
                 ("motion/debateart_0003.yml", "'speech_order'", "got nothing"), id="motion-no-speech-order"),
    pytest.param(debateart_case("motion/debateart_0003.yml", "motion: M\npro_side: [{name: Ann}]\n"
                                                             "con_side: [{name: Bo}]\nspeech_order: [Ann, Zed]\n"),
                 ("motion/debateart_0003.yml", "speech_order[1]", "'Zed'", "neither"), id="motion-order-unknown"),
    pytest.param(debateart_case("motion/debateart_0003.yml", "motion: [unclosed\n"),
                 ("motion/debateart_0003.yml", "not valid YAML", "line 2"), id="motion-bad-yaml"),
    pytest.param(debateart_case("speech/debateart_0012.yml", "debater_name: Di\ncontent: c\n"),
                 ("speech/debateart_0012.yml", "non-empty list", "got a mapping"), id="speech-not-list"),
    pytest.param(debateart_case("speech/debateart_0012.yml", speeches("Di", "Zed", "Di", "Cy")),
                 ("speech/debateart_0012.yml", "item 2 (line 3)", "'Zed'", "neither pro_side nor con_side"),
                 id="speech-unknown-debater"),
    pytest.param(debateart_case("speech/debateart_0012.yml", speeches("Di", "Di", "Di", "Cy")),
                 ("speech/debateart_0012.yml", "item 2 (line 3)", "speech_order[1]", "'Cy'"),
                 id="speech-order-mismatch"),
    pytest.param(debateart_case("speech/debateart_0012.yml", speeches("Di", "Cy")),
                 ("speech/debateart_0012.yml", "2 speeches", "motion/debateart_0012.yml", "names 4"),
                 id="speech-count-mismatch"),
    pytest.param(debateart_case("speech/debateart_0012.yml", speeches("Di", "Cy", "Di")
                                + "- debater_name: [Cy]\n  content: c\n"),
                 ("speech/debateart_0012.yml", "item 4 (line 7)", "debater_name ['Cy']"), id="speech-name-not-text"),
    pytest.param(debateart_case("speech/debateart_0012.yml", speeches("Di", "Cy", "Di")
                                + "- debater_name: Cy\n  content: {a: b}\n"),
                 ("speech/debateart_0012.yml", "item 4 (line 7)", "'content' must be a string"),
                 id="speech-content-not-text"),
]


@pytest.mark.parametrize("write, fragments", BAD + BAD_DEBATEART)
def test_bad_dataset_exits_2_naming_the_file(tmp_path, fake_llm, write, fragments):
    ws = workspace(tmp_path / "ws", fake_llm.api_base)
    dataset = write(tmp_path)
    assert invoke("judge-bench", dataset, "--judge", "nope", "-w", ws).exit_code == 2  # first open done
    before = snapshot(ws)
    assert_user_error(invoke("judge-bench", dataset, "--judge", "j", "-w", ws), *fragments)
    assert snapshot(ws) == before
    assert fake_llm.requests == []


def test_a_folder_of_neither_layout_names_both(tmp_path, fake_llm):
    ws = workspace(tmp_path / "ws", fake_llm.api_base)
    (tmp_path / "empty").mkdir()
    assert_user_error(invoke("judge-bench", tmp_path / "empty", "--judge", "j", "-w", ws),
                      "empty/gold.csv: no such file", "gold/final.csv")
