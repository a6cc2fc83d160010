"""How ``%dsh`` is typed: the help text (``%dsh --help``, ``%dsh?``) and the one input
transformer the extension installs, so that a prompt may end with a question mark.
"""

from __future__ import annotations

import re

from .args import FLAGS

SUBCOMMANDS: tuple[tuple[str, str], ...] = (
    ("stop", "cancel the running turn of the current session (or --session ID)"),
    ("sessions", "table of saved sessions: id, title, turns, last activity, status"),
    ("sessions --search TEXT", "sessions and events (seq, type, snippet) whose prompts, answers or tool text match"),
    ("resume [ID]", "reopen a saved session (crash repair applied) and make it the current one; without ID, this notebook's last session; --model=replay:ORIGIN replays a fork"),
    ("show [ID|PATH]", "the loop widget of a session (default: current) or of a saved log by its path; --inspect for the inspector; --stats for its time, tokens and cost"),
    ("config", "effective model, base URL, workspace, home; the key only as set / not set"),
    ("mcp [list]", "MCP servers of $DSH_HOME/mcp.json: status (not started / running / failed) and tools"),
    ("mcp start [NAME]", "start the MCP servers now (else the first prompt starts them); restart NAME"),
    ("mcp add NAME -- CMD ARGS", "add a stdio MCP server to mcp.json (--env K=V, --timeout S); or NAME --url URL"),
    ("mcp remove NAME", "remove an MCP server from mcp.json (it stops; its tools go)"),
    ("doctor", "which protections are active here: sandbox, network, redaction, grep engine, locks"),
    ("compact [ID]", "summarise the older turns of a session (default: current) into one message now"),
    ("policy [ID]", "the approval policy of a session: mode, budgets, rules file, session grants, callables"),
    ("mode [NAME]", "the current session's permission mode; with NAME it changes (a new session's when none yet): "
     "default, accept-edits, plan, dont-ask, bypass (DSH_ALLOW_BYPASS=1)"),
    ("fork [ID] --at SEQ", "a new session repeating events 0..SEQ of ID (default: current); it becomes current"),
    ("compare A B", "two sessions side by side by turn and step (a widget); the first divergence and its diff"),
    ("rewind [N]", "files, variables and conversation back to the start of turn N (default: the last); "
     "--files / --conversation / --variables for some of them, --dry-run, --force (overwrite conflicts)"),
    ("undo", "rewind the last turn (files, variables, conversation); --dry-run, --force"),
    ("changes [TURN]", "the files a turn (default: the last) changed, as unified diffs"),
)

EXAMPLES = """\
  %dsh what files are in this workspace?
  %dsh run the tests; if they fail fix src/math.ts
  %dsh --new --model deepseek:deepseek-chat explain src/math.ts
  %dsh --base-url http://localhost:11434/v1 --model qwen2.5:7b say hi
      with a base URL the whole --model value is the model name (unless openai:/deepseek:/script:)
  %dsh summarise the columns of {df_name}
      {name} / {name.attr} insert str() of a notebook variable; {{ and }} are literal braces
  %dsh --no-interpolate write a dict literal like {"a": 1}
  %dsh --approve auto --cwd ~/project run the linter
  %dsh --new --demo --model local:smollm2 read README.md and summarise
      --demo: a fresh copy of the demo project, for any model (else a real model works in this folder)
  %dsh --mode accept-edits --cwd ~/project fix the linter's findings
  %dsh --mode plan add a --verbose flag to the CLI
      plan first: only reads run; the agent presents its plan, you approve it (continue in
      accept-edits or default) or send it back with feedback
  %dsh mode dont-ask
      from now on nothing is asked: what would ask is denied (CI, papermill)
  %dsh -- show me the README
      `--` ends the flags: this is a prompt, not the `show` subcommand
  %%dsh --session s_0123456789ab
  a multi-line prompt in the cell body, sent to that session
  h = %dsh --bg refactor src/
      then: await h  |  h.wait()  |  h.cancel()  |  h.done()  |  h.result  |  h.session_id
  %dsh --bg --steer also update the README
      while a turn runs: --steer joins its next step; without it the prompt queues
  %dsh --max-steps 10 --max-time 300 fix the failing tests
      turn budgets: the turn ends with reason budget when one runs out
  %dsh --rules ~/.dsh/rules.json run the linter
      rules: [{"tool": "bash", "pattern": "rm *", "action": "deny"}, ...]; first match wins
  @dsh_notebook.policy
  def no_pushes(call): return "deny" if call.tool == "bash" and "git push" in call.subject else None
  %config DshMagics.model = "deepseek:deepseek-chat"
      also DshMagics.base_url, .mode (a new session's), .approve (legacy: auto|ask|deny), .home,
      .output (auto|display|stream),
      .max_steps, .max_time, .policy_file
  output auto: a live display in JupyterLab / Notebook 7 / nbclient, a text stream in
      jupyter console and terminal IPython; DshMagics.output overrides it"""


def help_text() -> str:
    width = max(len(f"{s.name} {s.metavar or ''}") for s in FLAGS) + 2
    lines = ["%dsh [FLAGS] PROMPT      one prompt; the cell waits and streams the turn",
             "%%dsh [FLAGS]           the cell body is the prompt", "", "Flags (before the prompt):"]
    for spec in FLAGS:
        left = f"{spec.name} {spec.metavar or ''}".rstrip()
        lines.append(f"  {left.ljust(width)}{spec.help}")
    lines += ["  --".ljust(width + 2) + "end of flags: everything after it is the prompt", "",
              "Subcommands (the whole line):"]
    for usage, text in SUBCOMMANDS:
        lines.append(f"  %dsh {usage.ljust(width - 5)}{text}")
    lines += ["", "The cell blocks and streams the turn; its value is a TurnResult (.text, .session_id,",
              ".turn, .reason, .events, .tool_calls, .usage, .duration_ms, .cost_usd). Interrupt the kernel to cancel the turn (every",
              "tool call gets a result; the session stays usable). In modes that ask (default, accept-edits,",
              "plan), a call that needs approval asks on stdin while the cell runs, showing the whole call",
              "(y: yes, n: no, a: allow this tool — for bash a read-only command name or this exact command",
              "— for the rest of the session); in --bg mode the widget asks. Every call's decision names",
              "the mode and what decided it (rule, grant, mode, user): show --stats counts them by mode.",
              "Tools: read, write, edit, bash, glob, grep, and python (runs code in this notebook's",
              "namespace, on the main thread; it asks unless the mode is bypass or the legacy auto;",
              "its result lists the names it added, rebound, deleted), notebook_read (the cells run so",
              "far, with outputs), inspect_var (a variable, without running its code), notebook_insert",
              "(proposes a cell below; a person approves it in every mode but bypass). In the agent kernel (install-kernel) every cell is",
              "a prompt; %%python cells run Python; % and ! lines are IPython's.",
              "Environment: DSH_MODEL, DSH_BASE_URL, DSH_API_KEY (else DEEPSEEK_API_KEY /",
              "OPENAI_API_KEY), DSH_HOME (default ~/.dsh; logs in $DSH_HOME/sessions).",
              "", "Examples:", EXAMPLES]
    return "\n".join(lines)


_QUESTION_LINE = re.compile(r"^(?P<indent>[ \t]*)(?P<assign>[A-Za-z_][\w.]*\s*=\s*)?%dsh[ \t]+(?P<rest>.*\S)[ \t]*\?[ \t]*$")


def keep_question_marks(lines: list[str]) -> list[str]:
    """An input transformer: ``%dsh what is this?`` is a prompt, not IPython's ``obj?`` help.

    IPython turns any line ending in ``word?`` into a help request (and ``… ?`` into a syntax
    error) *before* it looks at magics. This rewrites such ``%dsh`` lines to the very call
    IPython itself would make (``get_ipython().run_line_magic("dsh", line)``), a step earlier.
    ``%dsh?`` (help on the magic) and ``%%dsh`` cells are left alone.
    """
    if lines and lines[0].lstrip().startswith("%%"):
        return lines
    out = []
    for line in lines:
        m = _QUESTION_LINE.match(line.rstrip("\r\n"))
        if m is None:
            out.append(line)
            continue
        rest = line.rstrip("\r\n")[len(m.group("indent")) + len(m.group("assign") or "") + len("%dsh"):].strip()
        ending = line[len(line.rstrip("\r\n")):]
        out.append(f"{m.group('indent')}{m.group('assign') or ''}get_ipython().run_line_magic('dsh', {rest!r}){ending}")
    return out
