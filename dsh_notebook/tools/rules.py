"""Approval policies (issue 13 item 4): rules, "allow for this session" grants, callables.

Before a call runs, its tool's default (``allow`` for read / glob / grep, ``ask`` for bash / write
/ edit / python) may be overridden by the session's :class:`ApprovalPolicy`, consulted in order:

1. **callables** registered from the notebook (``dsh_notebook.policy(fn)``): ``fn(call)`` gets a
   :class:`PolicyCall` and returns ``"allow"`` / ``"deny"`` / ``"ask"`` or ``None`` (no opinion);
   the first answer wins; a callable that raises denies (fail closed). They run on the host's
   thread: keep them quick and free of notebook state that another thread could be changing;
2. **rules** from a JSON file (``--rules FILE``, ``DSH_POLICY_FILE``): a list of
   ``{"tool": "bash", "pattern": "rm *", "action": "deny"}`` — ``tool`` a name or a glob (``*``),
   ``pattern`` a glob (:func:`fnmatch.fnmatchcase`, default ``*``) on the call's *subject*, which
   each tool declares (``Tool.subject``): the command for ``bash``, the code for ``python``, the
   path for file tools (``file_path``, or ``path`` / ``pattern`` for grep / glob), the raw
   arguments otherwise. First match wins;
3. **grants** — "allow for the rest of the session" answers (``a`` at the stdin prompt, the
   widget's button), read from the session log's ``approval/decided.grant``: for ``bash`` an exact
   command or a read-only command name (see :mod:`.grants`), for other tools the whole tool.

Bash commands are matched **parsed** (:mod:`.shell_parse`): a rule's ``pattern`` is a glob on the
whole line and on each simple command of it, normalised (quotes removed, spaces collapsed) both as
written (``sudo touch x``) and as resolved through wrappers and paths (``touch x``). A ``deny`` or
``ask`` rule matches when the whole line or ANY simple command matches — or when the line is
*unresolved* (any expansion, assignment, compound command, evaluating builtin, parse error …: see
:mod:`.shell_parse`). An ``allow`` rule matches only a resolved line without output redirection to
a file whose EVERY simple command, as written, matches (a pattern without wildcards: the whole
line exactly): ``git status; rm -rf ~`` is not ``git status *``. Neither an allow rule nor a grant
lets a line run that starts git in a way :func:`.git_guard.git_refusal` refuses (the repository's
configuration may run programs); it is asked, and the prompt says why, as it says why an
unresolved line is asked ("unresolved: parameter expansion in a redirect"). Decisions made without asking are logged as
``approval/decided`` with ``by`` (``policy`` / ``rule`` / ``session``) and ``rule`` (the label of
what decided: ``policy:fn``, ``rules.json#2 bash "rm *"``, ``session bash "git status *"``).
"""

from __future__ import annotations

import asyncio
import fnmatch
import json
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, JsonValue, ValidationError

from ..errors import UserError
from ..redaction import MASK, redact
from ..wire.events import ApprovalDecided, Grant
from .base import ToolSpec
from .git_guard import git_refusal
from .grants import bash_grant_covering, bash_grant_for, glob_literal
from .outcome import PolicyVerdict, ToolInvocation
from .registry import known_tool
from .shell_parse import parse_line
from .visible import visible

Action = Literal["allow", "deny", "ask"]


class Rule(BaseModel):
    """One approval rule (``tool``, ``pattern``, ``action``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    tool: str
    pattern: str = "*"
    action: Action


@dataclass(frozen=True)
class PolicyCall:
    """What a policy callable sees of one call."""

    call_id: str
    tool: str
    arguments: dict[str, JsonValue]
    subject: str  # the command (bash), the code (python), the path (file tools), else the raw JSON
    raw_arguments: str
    session_id: str | None = None


def call_subject(name: str, arguments: str, tool: ToolSpec | None = None) -> str:
    """The string a rule's ``pattern`` is matched against: the subject ``tool`` declares (else the
    tool this package defines as ``name``: a saved log's call), or the raw arguments."""
    tool = tool or known_tool(name)
    return tool.rule_subject(arguments) if tool is not None else arguments


def _glob(pattern: str, text: str) -> bool:
    # `git status *` also covers the bare prefix `git status`
    return fnmatch.fnmatchcase(text, pattern) or (pattern.endswith(" *") and text == pattern[:-2])


def _collapse(text: str) -> str:
    return " ".join(text.split())


def bash_matches(pattern: str, command: str, *, allow: bool) -> bool:
    """Does a rule's ``pattern`` match a bash ``command`` (see the module docstring)?"""
    line = parse_line(command)
    if not allow:
        if line.unresolved or _glob(pattern, command) or _glob(pattern, _collapse(command)):
            return True
        return any(_glob(pattern, " ".join(form)) for cmd in line.commands
                   for form in (cmd.literal, *cmd.resolved))
    if line.unresolved or line.writes or not line.commands:
        return False
    exact = glob_literal(pattern)
    if exact is not None:
        return exact == command.strip()
    return all(not cmd.assignments and _glob(pattern, " ".join(cmd.literal)) for cmd in line.commands)


def _matches(tool_glob: str, pattern: str, name: str, subject: str, *, allow: bool) -> bool:
    if not fnmatch.fnmatchcase(name, tool_glob):
        return False
    if name == "bash":
        return bash_matches(pattern, subject, allow=allow)
    return _glob(pattern, subject)


class RuleSet:
    """Rules loaded from one file; first match wins."""

    def __init__(self, rules: Sequence[Rule], source: str = "rules") -> None:
        self.rules = tuple(rules)
        self.source = source

    def label(self, index: int) -> str:
        rule = self.rules[index]
        return f'{self.source}#{index + 1} {rule.tool} "{rule.pattern}"'

    def match(self, name: str, subject: str, *, may_allow: bool = True) -> tuple[Action, str] | None:
        for i, rule in enumerate(self.rules):
            if rule.action == "allow" and not may_allow:
                continue
            if _matches(rule.tool, rule.pattern, name, subject, allow=rule.action == "allow"):
                return rule.action, self.label(i)
        return None


def load_rules(path: str | Path) -> RuleSet:
    """Read a rules file: a JSON list of rules (or ``{"rules": [...]}``). ``BAD_RULES`` if not."""
    file = Path(path).expanduser()
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(f"rules file {str(file)!r} does not exist", code="BAD_RULES") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise UserError(f"rules file {str(file)!r} is not readable JSON: {exc}", code="BAD_RULES") from None
    items = data.get("rules") if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise UserError(f"rules file {str(file)!r} must hold a JSON list of "
                        '{"tool": ..., "pattern": ..., "action": "allow|deny|ask"}', code="BAD_RULES")
    rules = []
    for i, item in enumerate(items):
        try:
            rules.append(Rule.model_validate(item))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "rule"
            raise UserError(f"rules file {str(file)!r}, rule {i + 1}: {where}: {first['msg']}",
                            code="BAD_RULES") from None
    return RuleSet(rules, file.name)


def bash_ask_note(command: str) -> str | None:
    """``unresolved: REASON`` for a bash line the parser cannot resolve (the prompt shows it)."""
    why = parse_line(command).unresolved
    return f"unresolved: {why}" if why else None


def ask_reason(name: str, arguments: str, reason: str | None) -> str:
    """`` (WHY)`` after the call in an approval prompt: the reason it is asked (``unresolved: …``
    for a bash line the parser cannot resolve), else nothing."""
    why = reason or (bash_ask_note(call_subject(name, arguments)) if name == "bash" else None)
    return f" ({visible(why)})" if why else ""


def grant_for(name: str, arguments: str) -> Grant | None:
    """The grant an "allow for this session" answer gives: for bash an exact command or a read-only
    name (:func:`.grants.bash_grant_for`; ``None`` when none could match), else the whole tool."""
    if name != "bash":
        return Grant(tool=name, pattern="*")
    return bash_grant_for(call_subject(name, arguments))


def grant_label(grant: Grant) -> str:
    return f'session {grant.tool} "{grant.pattern}"'


def grant_shown(grant: Grant) -> Grant:
    """The grant as it is logged, shown and sent: its pattern with every secret masked. A masked
    pattern holds an unescaped ``***`` (an exact grant escapes every ``*`` of its command), so
    read back from the log it grants nothing: a resumed session asks again for a command with a
    secret in it, while the process that was answered keeps the grant as given
    (:meth:`ApprovalPolicy.remember`)."""
    shown = redact(grant.pattern)
    return grant if shown == grant.pattern else Grant(tool=grant.tool, pattern=shown)


# --- callables registered from the notebook ----------------------------------------------------

PolicyFn = Callable[[PolicyCall], "Action | None"]
_CALLABLES: list[PolicyFn] = []
_LOCK = threading.Lock()


def register_policy(fn: PolicyFn) -> PolicyFn:
    """Register ``fn`` for every session of this process (``dsh_notebook.policy``); a decorator.
    ``unregister_policy(fn)`` removes it."""
    if not callable(fn):
        raise UserError("dsh_notebook.policy(fn) needs a callable: fn(call) -> 'allow'|'deny'|'ask'|None",
                        code="BAD_POLICY")
    with _LOCK:
        if fn not in _CALLABLES:
            _CALLABLES.append(fn)
    return fn


def unregister_policy(fn: PolicyFn) -> bool:
    with _LOCK:
        if fn in _CALLABLES:
            _CALLABLES.remove(fn)
            return True
    return False


def registered_policies() -> list[PolicyFn]:
    with _LOCK:
        return list(_CALLABLES)


def _fn_name(fn: Any) -> str:
    return str(getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or type(fn).__name__)


class ApprovalPolicy:
    """The approval policy of one session: callables, then rules, then the session's grants."""

    def __init__(self, events: Sequence[Any] = (), rules: RuleSet | None = None, *,
                 callables: Callable[[], Sequence[PolicyFn]] = registered_policies,
                 session_id: str | None = None, workspace: str | Path | None = None) -> None:
        self.events = events  # the session's log (a live view): grants are read from it
        self.rules = rules
        self.callables = callables
        self.session_id = session_id
        self.workspace = workspace  # where bash runs (its git repository is checked); None: cwd
        self._grants: list[Grant] = []
        self._scanned = 0

    @property
    def grants(self) -> list[Grant]:
        """The grants that decide (as given: a secret in one stays, for matching only)."""
        events = self.events
        for k in range(self._scanned, len(events)):
            event = events[k]
            if isinstance(event, ApprovalDecided) and event.grant is not None and event.decision == "allow":
                if MASK not in event.grant.pattern and event.grant not in self._grants:  # masked: grants nothing
                    self._grants.append(event.grant)
        self._scanned = len(events)
        return list(self._grants)

    def shown_grants(self) -> list[Grant]:
        """The grants as a client is shown them: secrets masked (:func:`grant_shown`)."""
        return list(dict.fromkeys(grant_shown(g) for g in self.grants))

    def remember(self, grant: Grant) -> None:
        """An "allow for the session" answered in this process, as given: its logged form masks a
        secret in it (:func:`grant_shown`), and the log alone would not let the command run again."""
        if grant not in self.grants:
            self._grants.append(grant)

    def evaluate(self, call_id: str, name: str, arguments: str, *, use_callables: bool = True,
                 tool: ToolSpec | None = None) -> tuple[Action, str, str] | None:
        """``(action, by, rule label)`` of the first callable / rule / grant that decides, else None."""
        return self._evaluate(call_id, name, arguments, use_callables, tool)[0]

    def _evaluate(self, call_id: str, name: str, arguments: str, use_callables: bool, tool: ToolSpec | None = None,
                  refusal: Callable[[str], str | None] | None = None,
                  ) -> tuple[tuple[Action, str, str] | None, str | None]:
        """The decision, and why an allow (rule or grant) was set aside for a bash line."""
        git = refusal or self.git_refusal
        subject = call_subject(name, arguments, tool)
        if use_callables:
            for fn in self.callables():
                try:
                    parsed = json.loads(arguments) if arguments else {}
                except ValueError:
                    parsed = {}
                call = PolicyCall(call_id, name, parsed if isinstance(parsed, dict) else {}, subject,
                                  arguments, self.session_id)
                try:
                    out = fn(call)
                except Exception as exc:
                    return ("deny", "policy", f"policy:{_fn_name(fn)} failed ({type(exc).__name__}: {exc})"[:300]), None
                if out in ("allow", "deny", "ask"):
                    return (out, "policy", f"policy:{_fn_name(fn)}"), None
        refused: str | None = None
        if self.rules is not None:
            hit = self.rules.match(name, subject)
            if hit is not None and hit[0] == "allow" and name == "bash":
                refused = git(subject)
                if refused:
                    hit = self.rules.match(name, subject, may_allow=False)
            if hit is not None:
                return (hit[0], "rule", hit[1]), refused
        grants = self.grants
        if name == "bash":
            hit_grant = bash_grant_covering(grants, subject)
            if hit_grant is not None:
                refused = refused or git(subject)
                if not refused:
                    return ("allow", "session", grant_label(hit_grant)), None
            return None, refused
        for grant in grants:
            if _matches(grant.tool, grant.pattern, name, subject, allow=True):
                return ("allow", "session", grant_label(grant)), None
        return None, None

    def git_refusal(self, command: str) -> str | None:
        """Why ``command`` may not run unasked because of how it starts git (:mod:`.git_guard`)."""
        return git_refusal(parse_line(command), self.workspace)

    async def pre_execute(self, inv: ToolInvocation, verdict: PolicyVerdict) -> PolicyVerdict | None:
        """A ToolRuntime ``pre_execute`` hook: the policy's verdict, or ``None`` to keep the tool's."""
        if verdict.decision == "deny":
            return None  # a disabled tool stays disabled
        subject = call_subject(inv.name, inv.arguments, inv.tool)
        git: str | None = None
        if inv.name == "bash":  # parse (cached) and read git's configuration off the host loop
            git = await asyncio.to_thread(self.git_refusal, subject)
        hit, refused = self._evaluate(inv.call_id, inv.name, inv.arguments, True, inv.tool, lambda _s: git)
        note = (bash_ask_note(subject) if inv.name == "bash" else None) or (
            f"not run unasked: {refused}" if refused else None)
        if hit is None:  # the tool's own verdict, with the reason a bash line is asked
            return PolicyVerdict(verdict.decision, note, verdict.source) if note and verdict.decision == "ask" else None
        action, by, label = hit
        reason = f"{label} says {action}"
        if note and action != "allow":  # matched because the line could not be fully checked: say so
            reason += f" ({note})"
        return PolicyVerdict(action, reason, by, rule=label)


__all__ = [
    "ApprovalPolicy", "PolicyCall", "Rule", "RuleSet", "ask_reason", "bash_ask_note", "bash_matches", "call_subject", "grant_for",
    "grant_label", "grant_shown",
    "load_rules", "register_policy", "registered_policies", "unregister_policy",
]  # fmt: skip
