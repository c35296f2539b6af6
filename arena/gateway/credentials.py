"""The environment variables a command's models and searches need, found before any call: a missing key is named at
once with the entries and judges that need it, not met by every call of a tournament, and a refused key is named by
its variable, never by its value.

Which variables a model's provider reads is litellm's knowledge (validate_environment), the common providers' known by
heart (arena.gateway.providers.KEYS) so that a missing key is named without importing litellm; the search
provider's key is TAVILY_API_KEY.
"""
from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, MutableMapping
from dataclasses import dataclass

from arena.base.errors import UserError
from arena.gateway.lazy import litellm
from arena.gateway.providers import KEYS
from arena.domain.records import is_simulated

SEARCH_KEY = "TAVILY_API_KEY"
# Variables of which any one will do, as litellm lists them together when neither is set.
_EITHER = (("GEMINI_API_KEY", "GOOGLE_API_KEY"),)


@dataclass(frozen=True)
class Caller:
    """An entry or judge that will call a model (and search the web, if `searches`)."""

    table: str  # "entry" or "judge"
    name: str
    model: str
    api_base: str = ""
    searches: bool = False


def stand_in_key(model: str, api_base: str) -> bool:
    """Whether a call to model sends a stand-in key: an OpenAI-compatible server of one's own (openai/ with an
    api_base: vLLM, Ollama, llama.cpp) without OPENAI_API_KEY, which needs no key, while the client insists on one."""
    return bool(api_base) and model.startswith("openai/") and not os.environ.get("OPENAI_API_KEY")


def drop_empty_keys(environ: MutableMapping[str, str]) -> list[str]:
    """An empty key is a missing key: take each variable named like a key (..._KEY, ..._TOKEN) whose value is empty
    or blank out of environ, so that the check names it as not set rather than a request being sent with nothing
    (litellm counts a variable that is set, however empty, as there). The names taken out."""
    empty = [name for name, value in environ.items() if name.endswith(("_KEY", "_TOKEN")) and not value.strip()]
    for name in empty:
        del environ[name]
    return empty


def model_needs(model: str, api_base: str = "") -> tuple[str, ...]:
    """The variables model's provider reads that the environment lacks, each an 'A or B' when either will do; none
    for the simulator or a server of one's own. A common provider's are read from the arena's own table
    (arena.gateway.providers.KEYS: no litellm import, seconds, before the user hears what is missing); the others'
    from litellm (litellm_needs)."""
    if is_simulated(model) or stand_in_key(model, api_base):
        return ()
    prefix, slash, _ = model.partition("/")
    if not slash or prefix not in KEYS:
        return litellm_needs(model, api_base)
    # With an api_base, a variable naming the base (OLLAMA_API_BASE) is not needed, as litellm has it.
    return tuple(said for said, accepted in KEYS[prefix]
                 if not any(name in os.environ for name in accepted) and not (api_base and "API_BASE" in said))


def litellm_needs(model: str, api_base: str = "") -> tuple[str, ...]:
    """model_needs by litellm's validate_environment (imported: seconds). A UserError when litellm can place no
    provider."""
    try:
        litellm().get_llm_provider(model=model, api_base=api_base or None)
    except Exception:  # litellm's BadRequestError: a name it cannot place
        raise UserError(f"model {model!r} names no provider litellm knows: write PROVIDER/MODEL, e.g. 'openai/"
                        f"{model}' or 'ollama/{model}'") from None
    # With an api_base, a variable naming the base (OLLAMA_API_BASE, AZURE_API_BASE) is not needed: litellm drops it.
    found = litellm().validate_environment(model=model, api_base=api_base or None)
    missing = list(found.get("missing_keys") or ())
    for group in _EITHER:
        if set(group) <= set(missing):
            missing = [" or ".join(group) if name == group[0] else name for name in missing if name not in group[1:]]
    return tuple(missing)


def missing(callers: Iterable[Caller], search_provider: str) -> dict[str, list[Caller]]:
    """Each variable the environment lacks → the callers that need it, in the callers' order: their models'
    keys, and TAVILY_API_KEY for a real caller that searches when [search] provider is tavily."""
    callers = list(callers)
    needs: dict[str, list[Caller]] = {}
    for caller in callers:
        try:
            names = model_needs(caller.model, caller.api_base)
        except UserError as exc:
            raise UserError(f"{caller.table} {caller.name}: {exc}") from None
        for name in names:
            if caller not in needs.setdefault(name, []):
                needs[name].append(caller)
    searching = [c for c in callers if c.searches and not is_simulated(c.model)]  # the simulator searches offline
    if searching and search_provider == "tavily" and not os.environ.get(SEARCH_KEY):
        needs[SEARCH_KEY] = searching
    return needs


def require(callers: Iterable[Caller], search_provider: str, config_name: str = "arena.toml") -> None:
    """A UserError naming each missing variable and who needs it, when any is missing (see missing)."""
    needs = missing(callers, search_provider)
    if needs:
        raise UserError(missing_message(needs, config_name))


def missing_message(needs: Mapping[str, list[Caller]], config_name: str = "arena.toml", why: str = "") -> str:
    """What require says: one line per variable, naming the entries and judges of config_name that need it; why
    nothing was run, when more than that the keys are missing."""
    lines = [f"{name} is not set; {config_name}'s {_who(callers)} need{'s' if len(callers) == 1 else ''} it"
             + (f" ({_what(name, callers)})" if _what(name, callers) else "") for name, callers in needs.items()]
    return (f"missing credentials, so nothing was run{f' ({why})' if why else ''}:\n  " + "\n  ".join(lines) + "\n"
            "export each in the environment (keys are read only from there); a model on a server of your own takes "
            "api_base in its table, and [search] provider = \"offline\" searches without a key")


def refused(model: str, api_base: str, status: int) -> str:
    """What a 401 or 403 from model's provider says: which variable's key was refused, never the key itself."""
    what = "401 Unauthorized" if status == 401 else "403 Forbidden: the key may lack access to this model"
    if stand_in_key(model, api_base):
        return (f"the server at {api_base} wants a key ({what}), and OPENAI_API_KEY is not set: export the key it "
                "expects as OPENAI_API_KEY")
    return f"the key in {key_variable(model)} was refused ({what})"


def search_refused(status: int) -> str:
    """What a 401 or 403 from the search provider says."""
    what = "401 Unauthorized" if status == 401 else "403 Forbidden: the key's plan may not allow this search"
    return f"the key in {SEARCH_KEY} was refused ({what})"


def key_variable(model: str) -> str:
    """The variable holding the key sent to model's provider: for a provider of KEYS, the first of its variables
    that is set (GOOGLE_API_KEY for gemini/ when GEMINI_API_KEY is not); else a set *_KEY/_TOKEN variable named
    after the provider, else the <PROVIDER>_API_KEY litellm reads by default."""
    provider = model.partition("/")[0] if "/" in model else "openai"
    if KEYS.get(provider):
        accepted = KEYS[provider][0][1]
        return next((name for name in accepted if name in os.environ), accepted[0])
    stem = provider.upper().replace("_", "")
    names = sorted(k for k in os.environ if k.endswith(("_KEY", "_TOKEN")) and k.replace("_", "").startswith(stem))
    return names[0] if names else f"{provider.upper()}_API_KEY"


def _who(callers: list[Caller]) -> str:
    """'entries a, b and judge j1', in the callers' order within each table."""
    parts = []
    for table, plural in (("entry", "entries"), ("judge", "judges")):
        names = [c.name for c in callers if c.table == table]
        if names:
            parts.append(f"{table if len(names) == 1 else plural} {', '.join(names)}")
    return " and ".join(parts)


def _what(name: str, callers: list[Caller]) -> str:
    """Why they need it: the search provider, or the models."""
    if name == SEARCH_KEY:
        return '[search] provider = "tavily"'
    return ", ".join(dict.fromkeys(c.model for c in callers))
