"""The help of the command lines, from the registry: ``%dsh --help`` (``%dsh?``, the agent
kernel's help) and ``%dsh COMMAND --help``. The CLI's ``--help`` is argparse's, from the same
declarations (:mod:`.argparser`).
"""

from __future__ import annotations

from .spec import Command
from .table import command, line_flags, on

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


def subcommand_lines() -> list[tuple[str, str]]:
    """``%dsh --help``'s subcommand lines: (usage after ``%dsh ``, what it does), in the registry's order."""
    return [line for cmd in on("dsh") for line in cmd.dsh_lines]


def help_text() -> str:
    flags = line_flags()
    width = max(len(f"{s.name} {s.metavar or ''}") for s in flags) + 2
    lines = ["%dsh [FLAGS] PROMPT      one prompt; the cell waits and streams the turn",
             "%%dsh [FLAGS]           the cell body is the prompt", "", "Flags (before the prompt):"]
    for spec in flags:
        left = f"{spec.name} {spec.metavar or ''}".rstrip()
        lines.append(f"  {left.ljust(width)}{spec.help_on('dsh')}")
    lines += ["  --".ljust(width + 2) + "end of flags: everything after it is the prompt", "",
              "Subcommands (the whole line; COMMAND --help for one):"]
    for usage, text in subcommand_lines():
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


def command_help(name: str) -> str:
    """``%dsh COMMAND --help``: its usage, what it does, its words and flags on ``%dsh``."""
    cmd: Command = command(name)
    lines = [f"usage: {cmd.dsh_usage or '%dsh ' + cmd.name}", ""]
    lines += [f"  %dsh {usage}\n      {text}" for usage, text in cmd.dsh_lines] or [f"  {cmd.help}"]
    words = [a for a in cmd.args_on("dsh") if a.name != "rest"]
    flags = [f for f in cmd.flags_on("dsh") if f.name != "--help"]
    if words:
        lines += ["", "Words:"] + [f"  {(a.metavar or a.name.upper()):<20}{a.help}" for a in words]
    if flags:
        lines += ["", "Flags:"] + [f"  {(f.name + ' ' + (f.metavar or '')).rstrip():<20}{f.help_on('dsh')}"
                                   for f in flags]
    if cmd.on("cli"):
        lines += ["", f"The CLI has it too: python -m dsh_notebook {cmd.name} --help"]
    return "\n".join(lines)
