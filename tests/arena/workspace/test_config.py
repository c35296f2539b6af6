"""arena.toml parsing and validation: good files parse to typed settings; every mistake is a
UserError naming the file, the key, its line (where the key is written) and what is wrong."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from arena.workspace.config import CONFIG_NAME, Config, load_config, parse_config
from arena.base.errors import UserError
from arena.domain.records import Entry, JudgeSpec
from arena.workspace.folder import TEMPLATE, init_workspace

PATH = Path("/somewhere/arena.toml")


def parse(text: str) -> Config:
    return parse_config(text, PATH)


# --- good inputs -----------------------------------------------------------------------------

def _assert_defaults(cfg: Config) -> None:
    assert cfg.arena.language == "en"
    assert cfg.arena.seed == 0
    assert cfg.arena.judge_runs == 3
    assert cfg.llm.max_concurrency == 16
    assert cfg.llm.retries == 4
    assert cfg.llm.timeout_s == 120
    assert isinstance(cfg.llm.timeout_s, float)
    assert cfg.llm.cache is True
    assert cfg.search.provider == "tavily"
    assert cfg.search.api_base_url == ""
    assert cfg.search.max_results == 5
    assert list(cfg.motions.sets) == ["builtin:en"]
    assert cfg.rating.side == "fit"
    assert cfg.entries == ()
    assert cfg.judges == ()


def test_template_parses_to_documented_defaults():
    _assert_defaults(parse(TEMPLATE))


def test_init_template_loads_to_documented_defaults(tmp_path):
    config_path = init_workspace(tmp_path / "ws")
    assert config_path == tmp_path / "ws" / CONFIG_NAME
    cfg = load_config(tmp_path / "ws")
    _assert_defaults(cfg)
    assert cfg.path == config_path


def test_empty_file_gives_defaults():
    _assert_defaults(parse(""))


def test_template_examples_uncommented_parse():
    """The commented examples in the template are themselves valid once uncommented."""
    uncommented = re.sub(r"^# (\[\[?|[a-z_]+ = )", r"\1", TEMPLATE, flags=re.M)
    cfg = parse(uncommented)
    assert [e.name for e in cfg.entries] == ["direct-gpt-4o"]
    assert dict(cfg.entries[0].params) == {"temperature": 0.2, "top_p": 0.75}
    assert [j.name for j in cfg.judges] == ["single-mini", "experts", "jury"]
    assert dict(cfg.judges[0].options) == {"swap_sides": False, "guard": True}  # the defaults turned over
    assert (cfg.judges[1].kind, cfg.judges[1].people, cfg.judges[1].runs) == ("human", ("ann", "bo", "cy"), 3)
    assert (cfg.judges[2].kind, len(cfg.judges[2].models), cfg.judges[2].runs) == ("jury", 4, 2)


GOOD = '''\
[arena]
language = "zh"
seed = 7
judge_runs = 5

[llm]
max_concurrency = 2
retries = 0
timeout_s = 30
cache = false

[search]
provider = "offline"
api_base_url = "http://127.0.0.1:9000"
max_results = 20

[motions]
sets = ["builtin:zh", "file:mine.yaml"]

[[entries]]
name = "alpha"
debater = "direct"
model = "offline/alpha"
strength = 1
[entries.params]
temperature = 0.3

[[entries]]
name = "beta.v2"
debater = "direct"
model = "openai/gpt-4o"
api_base = "https://proxy.example/v1"

[[judges]]
name = "j-default"
kind = "single"
model = "offline/judge"

[[judges]]
name = "j-one"
kind = "single"
model = "openai/gpt-4o-mini"
runs = 1
[judges.options]
swap_sides = true
'''


def test_good_config_parses_settings():
    cfg = parse(GOOD)
    assert (cfg.arena.language, cfg.arena.seed, cfg.arena.judge_runs) == ("zh", 7, 5)
    assert (cfg.llm.max_concurrency, cfg.llm.retries, cfg.llm.timeout_s, cfg.llm.cache) == (2, 0, 30.0, False)
    assert isinstance(cfg.llm.timeout_s, float)
    assert (cfg.search.provider, cfg.search.api_base_url, cfg.search.max_results) == (
        "offline", "http://127.0.0.1:9000", 20)
    assert cfg.motions.sets == ("builtin:zh", "file:mine.yaml")


@pytest.mark.parametrize("side", ["fit", "ignore"])
def test_rating_side_parses(side):
    assert parse(f'[rating]\nside = "{side}"\n').rating.side == side


def test_good_config_parses_entries():
    cfg = parse(GOOD)
    assert all(isinstance(e, Entry) for e in cfg.entries)
    alpha, beta = cfg.entries
    assert (alpha.name, alpha.debater, alpha.model, alpha.api_base) == ("alpha", "direct", "offline/alpha", "")
    assert alpha.strength == 1.0 and isinstance(alpha.strength, float)
    assert dict(alpha.params) == {"temperature": 0.3}
    assert alpha.simulated
    assert (beta.name, beta.model, beta.api_base, beta.strength) == (
        "beta.v2", "openai/gpt-4o", "https://proxy.example/v1", 0.0)
    assert dict(beta.params) == {}
    assert not beta.simulated
    assert cfg.entry("beta.v2") is beta


def test_good_config_parses_judges():
    cfg = parse(GOOD)
    assert all(isinstance(j, JudgeSpec) for j in cfg.judges)
    default, one = cfg.judges
    assert default.runs == 5  # no `runs`: [arena].judge_runs
    assert dict(default.options) == {}
    assert default.simulated
    assert one.runs == 1
    assert dict(one.options) == {"swap_sides": True}
    assert cfg.judge("j-one") is one


def test_judge_runs_default_is_three_without_arena_section():
    cfg = parse('[[judges]]\nname = "j"\nkind = "single"\nmodel = "offline/j"\n')
    assert cfg.judges[0].runs == 3


def test_unknown_entry_and_judge_names():
    cfg = parse(GOOD)
    with pytest.raises(UserError, match="unknown entry 'gamma'.*alpha"):
        cfg.entry("gamma")
    with pytest.raises(UserError, match="unknown judge 'nope'.*j-default"):
        cfg.judge("nope")


def _line_of(text: str, needle: str, occurrence: int = 0) -> int:
    numbers = [n for n, line in enumerate(text.splitlines(), start=1) if line.startswith(needle)]
    return numbers[occurrence]


def test_where_names_file_line_and_key():
    cfg = parse(GOOD)
    assert cfg.where("entries[1].model") == f"arena.toml:{_line_of(GOOD, 'model = ', 1)}: entries[1].model"
    assert cfg.where("judges[1].kind") == f"arena.toml:{_line_of(GOOD, 'kind = ', 1)}: judges[1].kind"
    assert cfg.where("entries[0].params") == f"arena.toml:{_line_of(GOOD, '[entries.params]')}: entries[0].params"
    # A key not written in the file: its enclosing table's line.
    assert cfg.where("entries[1].params") == f"arena.toml:{_line_of(GOOD, '[[entries]]', 1)}: entries[1].params"
    assert cfg.where("llm.backoff_s") == f"arena.toml:{_line_of(GOOD, '[llm]')}: llm.backoff_s"


def test_load_config_missing_file_suggests_init(tmp_path):
    with pytest.raises(UserError) as info:
        load_config(tmp_path)
    message = str(info.value)
    assert CONFIG_NAME in message and "arena init" in message


def test_load_config_not_utf8(tmp_path):
    (tmp_path / CONFIG_NAME).write_bytes(b'[arena]\nlanguage = "\xff"\n')
    with pytest.raises(UserError, match=CONFIG_NAME):
        load_config(tmp_path)


# --- bad inputs -------------------------------------------------------------------------------

ENTRY = '[[entries]]\nname = "a"\ndebater = "direct"\nmodel = "offline/a"\n'

BAD = [
    # (toml text, expected key or None, expected line or None, expected fragment)
    pytest.param('[arena]\nseed = 0\nlanguage = "en\n', None, None, "not valid TOML", id="toml-syntax"),
    pytest.param('[llm]\nretries = 4\nretries = 5\n', None, None, "not valid TOML", id="toml-duplicate-key"),
    pytest.param('[arena]\nseed = 1\n\n[database]\npath = "x"\n', "database", 4, "unknown section",
                 id="unknown-section"),
    pytest.param('[arena]\nseed = 1\n\n[llm]\nretries = 4\nretry = 5\n', "llm.retry", 6, "unknown key",
                 id="unknown-key"),
    pytest.param('[search]\nprovider = "offline"\nmax_result = 5\n', "search.max_result", 3, "unknown key",
                 id="unknown-key-search"),
    pytest.param('[llm]\nretries = "4"\n', "llm.retries", 2, "expected a whole number, got '4'",
                 id="string-for-int"),
    pytest.param('[llm]\ncache = true\nmax_concurrency = true\n', "llm.max_concurrency", 3,
                 "expected a whole number, got True", id="bool-for-int"),
    pytest.param('[llm]\ntimeout_s = true\n', "llm.timeout_s", 2, "got True", id="bool-for-number"),
    pytest.param('[llm]\ncache = 1\n', "llm.cache", 2, "expected true or false", id="int-for-bool"),
    pytest.param('[arena]\nseed = 1.5\n', "arena.seed", 2, "expected a whole number", id="float-for-int"),
    pytest.param('[arena]\njudge_runs = 0\n', "arena.judge_runs", 2, "at least 1", id="judge-runs-0"),
    pytest.param('[arena]\nlanguage = "English"\n', "arena.language", 2, "language code", id="language"),
    pytest.param('\n[llm]\nretries = 4\nmax_concurrency = 0\n', "llm.max_concurrency", 4, "at least 1",
                 id="max-concurrency-0"),
    pytest.param('[llm]\nretries = -1\n', "llm.retries", 2, "at least 0", id="retries-negative"),
    pytest.param('[llm]\ntimeout_s = 0\n', "llm.timeout_s", 2, "above 0", id="timeout-0"),
    pytest.param('[llm]\nlitellm_path = "sdk"\n', "llm.litellm_path", 2, "'direct' or 'acompletion'",
                 id="litellm-path-unknown"),
    pytest.param('[search]\nprovider = "bing"\n', "search.provider", 2, "'tavily' or 'offline'",
                 id="provider-bing"),
    pytest.param('[search]\nmax_results = 50\n', "search.max_results", 2, "from 1 to 20", id="max-results-50"),
    pytest.param('[search]\napi_base_url = "localhost:8080"\n', "search.api_base_url", 2, "http(s) URL",
                 id="api-base-url-not-url"),
    pytest.param('[motions]\nsets = "builtin:en"\n', "motions.sets", 2, "expected an array", id="sets-string"),
    pytest.param('[motions]\nsets = ["en"]\n', "motions.sets", 2, "'builtin:NAME' or 'file:PATH'",
                 id="sets-bad-spec"),
    pytest.param('arena = 5\n', "arena", 1, "must be a table", id="section-not-table"),
    pytest.param('[arena]\nseed = 1\n\n[rating]\nside = "both"\n', "rating.side", 5,
                 "expected 'fit' or 'ignore', got 'both'", id="rating-side-unknown"),
    pytest.param('[rating]\nside = false\n', "rating.side", 2, "expected a string, got False",
                 id="rating-side-bool"),
    pytest.param('[rating]\ncontrol = ["length", "wordiness"]\n', "rating.control", 2,
                 "a list of distinct features among 'length', 'citations', 'markdown'", id="rating-control-unknown"),
    pytest.param('[rating]\ncontrol = ["length", "length"]\n', "rating.control", 2, "distinct features",
                 id="rating-control-twice"),
    pytest.param('[rating]\nside = "fit"\nweighting = "none"\n', "rating.weighting", 3,
                 "unknown key (expected one of side, control)", id="rating-unknown-key"),
    pytest.param(ENTRY + '[[entries]]\ndebater = "direct"\nmodel = "offline/b"\n', "entries[1]", 5,
                 "missing required key 'name'", id="entry-missing-name"),
    pytest.param(ENTRY + '[[entries]]\nname = "b"\nmodel = "offline/b"\n', "entries[1]", 5,
                 "missing required key 'debater'", id="entry-missing-debater"),
    pytest.param(ENTRY + '\n[[entries]]\nname = "b"\ndebater = "direct"\n', "entries[1]", 6,
                 "missing required key 'model'", id="entry-missing-model"),
    pytest.param(ENTRY + '[[entries]]\nname = "b"\ndebater = "direct"\nmodel = 4\n', "entries[1].model", 8,
                 "expected a string", id="entry-model-not-string"),
    pytest.param(ENTRY + '[[entries]]\nname = "b"\ndebater = "direct"\nmodel = ""\n', "entries[1].model", 8,
                 "litellm model string", id="entry-model-empty"),
    pytest.param(ENTRY + '[[entries]]\nname = "a"\ndebater = "direct"\nmodel = "offline/b"\n',
                 "entries[1].name", 6, "repeated name 'a'", id="entry-repeated-name"),
    pytest.param('[[entries]]\nname = "has space"\ndebater = "direct"\nmodel = "offline/a"\n',
                 "entries[0].name", 2, "letters, digits", id="entry-bad-name"),
    pytest.param(ENTRY + 'api_base = "127.0.0.1:8000/v1"\n', "entries[0].api_base", 5, "http(s) URL",
                 id="entry-api-base-not-url"),
    pytest.param(ENTRY + 'strength = "high"\n', "entries[0].strength", 5, "expected a whole number or a number",
                 id="entry-strength-string"),
    pytest.param(ENTRY + 'strength = inf\n', "entries[0].strength", 5, "finite", id="entry-strength-inf"),
    pytest.param(ENTRY + 'params = 5\n', "entries[0].params", 5, "expected a table", id="entry-params-not-table"),
    pytest.param(ENTRY + 'params = [1, 2]\n', "entries[0].params", 5, "expected a table",
                 id="entry-params-array"),
    pytest.param(ENTRY + 'temperatur = 0.2\n', "entries[0].temperatur", 5, "unknown key",
                 id="entry-unknown-key"),
    pytest.param('[entries]\nname = "a"\n', "entries", 1, "array of tables", id="entries-not-array"),
    pytest.param('[[judges]]\nname = "j"\nkind = "single"\n', "judges[0]", 1, "missing required key 'model'",
                 id="judge-missing-model"),
    pytest.param('[[judges]]\nname = "j"\nkind = "single"\nmodel = "offline/j"\nruns = 0\n', "judges[0].runs", 5,
                 "at least 1", id="judge-runs-0"),
    pytest.param('[[judges]]\nname = "j"\nkind = "single"\nmodel = "offline/j"\noptions = "x"\n',
                 "judges[0].options", 5, "expected a table", id="judge-options-not-table"),
    pytest.param('[[judges]]\nname = "j"\nkind = "single"\nmodel = "offline/j"\n'
                 '[[judges]]\nname = "j"\nkind = "single"\nmodel = "offline/k"\n',
                 "judges[1].name", 6, "repeated name 'j'", id="judge-repeated-name"),
]


@pytest.mark.parametrize("text, key, line, fragment", BAD)
def test_bad_config_raises_user_error(text, key, line, fragment):
    with pytest.raises(UserError) as info:
        parse(text)
    message = str(info.value)
    assert message.startswith("arena.toml")
    assert fragment in message
    if key is not None:
        assert f": {key}: " in message
    if line is not None:
        assert message.startswith(f"arena.toml:{line}: ")


def test_toml_syntax_error_names_the_line():
    with pytest.raises(UserError) as info:
        parse('[arena]\nseed = 0\nlanguage = "en\n')
    assert "line 3" in str(info.value)


def test_bad_config_via_load_config_names_the_file(tmp_path):
    (tmp_path / CONFIG_NAME).write_text('[llm]\nretries = "4"\n', encoding="utf-8")
    with pytest.raises(UserError, match=r"^arena\.toml:2: llm\.retries: "):
        load_config(tmp_path)


def test_dotted_key_error_names_the_line():
    with pytest.raises(UserError) as info:
        parse('llm.retries = "4"\n')
    assert str(info.value).startswith("arena.toml:1: llm.retries: ")
