"""The glossary: every word of the seeds a learner meets in the widgets and the notebooks.

One source. The notebooks link ``notebooks/glossary.md`` and the widgets' "Glossary" popover
reads the TypeScript of the same :data:`TERMS`; both are generated from here:

    python -m dsh_notebook.glossary               # rewrite the glossary page
    python -m dsh_notebook.glossary --check       # exit 1 if it is out of date (the tests run it)
    python -m dsh_notebook.glossary --typescript  # print the TypeScript: `make types` writes it
                                                  # into the front end, which pulls it from here

Each :class:`Term` has the word as the UI writes it, the other spellings it appears under
(``aliases``: a Python name and its TypeScript twin, a plural), its :data:`Topic`, and a
definition in plain words that names where in a run you can see it.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

Topic = Literal["seeds", "stages", "log", "request", "host", "ui"]
TOPIC_TITLES: dict[Topic, str] = {
    "seeds": "The seeds and their vocabulary",
    "stages": "The six stages of the tool feedback loop (seed 000)",
    "log": "The session log: events and their fields",
    "request": "Turns, steps and requests",
    "host": "The path of a prompt (seed 001, L1–L8)",
    "ui": "The widgets",
}


@dataclass(frozen=True)
class Term:
    term: str
    topic: Topic
    definition: str
    aliases: tuple[str, ...] = ()

    @property
    def anchor(self) -> str:
        return "".join(c if c.isalnum() else "-" for c in self.term.lower()).strip("-")


T = Term
TERMS: tuple[Term, ...] = (
    # -- the seeds ---------------------------------------------------------------------------
    T("seed", "seeds", "One of the three specification texts this project implements: seed 000 (the six-stage "
      "tool feedback loop), seed 001 (a prompt's path through layers L1–L8) and seed 003 (streaming and tool turns).",
      ("seeds",)),
    T("seed 000", "seeds", "The interactive explainer of how one tool result enters the next model request, in six "
      "stages and three views (message history, event payloads, responsibilities). The loop widget draws it on a real run."),
    T("seed 001", "seeds", "The walk from a web instruction to the model request, the tools and back, through eight "
      "layers L1–L8 and about forty named objects (Client Session, Remote, Gateway, Inbox …). Notebook 02 follows it."),
    T("L1–L8", "seeds", "The eight layers of seed 001: L1 user submission, L2 remote call, L3 host ingress, L4 "
      "admission, L5 scheduling, L6 request formation, L7 external execution (model and tools), L8 the return "
      "(follow, control, the client model, the UI).", ("L1", "L2", "L3", "L4", "L5", "L6", "L7", "L8")),
    T("tool feedback loop", "seeds", "How one tool call travels: the model asks for it (01), the agent registers it "
      "(02), the tool runtime runs it (03), the session commits its result (04), the next step derives the history "
      "with it (05) and freezes the next request (06) — then the model answers and the loop starts again.",
      ("feedback loop",)),
    T("Cordis Context", "seeds", "Seed 001's runtime entry (from the Cordis framework): components get Services by "
      "name through it, register contributions (prompt sections, tools, runtime contexts) and listen to hooks, all "
      "disposed with their owner. Here: dsh_notebook.context, printed by `Host.get().describe()`.",
      ("Cordis", "Context", "Service")),
    T("Scope", "seeds", "Which tools, prompt sections and listeners one Agent sees (seed 001's Harness Scope).",
      ("Harness Scope",)),
    # -- the six stages -----------------------------------------------------------------------
    T("stage", "stages", "One of the six moments of the tool feedback loop, 01–06. The diagram marks the current "
      "one; every stage is marked by a fact in the log (an event), so a saved session replays exactly.", ("stages",)),
    T("01 model response settled", "stages", "The assistant/message is recorded with a tool-call block (c1 and its "
      "arguments). Nothing has run; no result exists yet. Responsible: the model.", ("model response",)),
    T("02 tool call registered", "stages", "execute_tool_calls() appends tool/call when the call starts and keeps "
      "its seq — the result will cite it. Responsible: the agent.", ("execute_tool_calls", "executeToolCalls")),
    T("03 tool executes", "stages", "The tool runtime runs prepare → policy (approval) → execute → result handling. "
      "Progress goes to the view only, never into the history. Responsible: the tool runtime.", ("tool runtime",)),
    T("04 tool result committed", "stages", "tool/result carries the tool message and sourceEventSeqs pointing at "
      "the tool/call; commit_ready() commits results in the model's call order. Commit (memory) and flush (disk) "
      "are separate. Responsible: the session.", ("commit_ready", "commitReady", "commit", "flush")),
    T("05 message history derived", "stages", "The next step's prepare_request() calls session.derive_messages() and "
      "gets a history that includes the tool result. Responsible: agent and session.",
      ("derive_messages", "deriveMessages", "prepare_request", "prepareRequest")),
    T("06 next request sent", "stages", "The messages are frozen into request/frozen (its messageSeqs) and handed "
      "to adapter.stream(). This time the model gets the tool's result.", ("adapter.stream", "adapter")),
    T("responsibilities", "stages", "The third view: who acts at this stage — model, agent, tool runtime or "
      "session — colour-coded the same way in every view.", ("responsible",)),
    # -- the log --------------------------------------------------------------------------------
    T("session", "log", "One conversation with the agent: an append-only log file ($DSH_HOME/sessions/<id>.jsonl), "
      "a header line then one event per line. Its id looks like s_0123456789ab.", ("sessions",)),
    T("event", "log", "One fact of a session, one line of its log: seq, time, type (turn/start, tool/call, "
      "tool/result …) and its payload. Events are never changed, only appended.", ("events",)),
    T("events (count)", "log", "“N events” in the cell's summary line, the widgets' headers, %dsh sessions and show "
      "is always the same number: the events of the session's log up to the last one shown (its seq + 1; the "
      "header line is not an event).", ("N events",)),
    T("seq", "log", "An event's number in its session: dense from 0, equal to its line index. #43 means seq 43."),
    T("sourceEventSeqs", "log", "The provenance of an event: the seqs of the earlier events it came from. A "
      "tool/result cites its tool/call (arrows →); the inspector shows both directions (→ cites, ← cited by).",
      ("source_event_seqs", "provenance", "cites", "cited by")),
    T("surface", "log", "The model-visible part of the log: user, system, assistant and tool messages (not "
      "tool/call or bookkeeping). derive_messages() reads the surface; compaction replaces a span of it."),
    T("end-seed", "log", "The session/end-seed event: where a resumed log's new process begins. Everything before "
      "it is the closed history of the earlier run (repaired if it crashed); everything after is live.",
      ("session/end-seed", "end seed")),
    T("crash repair", "log", "On resume, a call left without a result gets a synthetic error result, so every "
      "tool call is answered (seed 003's second pairing layer).", ("repair",)),
    T("approval", "log", "Before bash, write, edit or python runs, the policy may ask a person: allow, deny, or "
      "allow for this session. approval/asked and approval/decided are in the log.", ("approvals",)),
    # -- turns, steps, requests -------------------------------------------------------------------
    T("turn", "request", "One task round: from turn/start to turn/end (its reason: completed, aborted, budget …). "
      "One prompt normally makes one turn.", ("turns",)),
    T("step", "request", "One model request and the tools it asked for, inside a turn: step/start … step/end. A "
      "turn has as many steps as the model needs.", ("steps",)),
    T("attempt", "request", "One try of a step's request; a retry after an error is a new attempt of the same "
      "step (llm/retry). New input joins only on the first attempt.", ("attempts",)),
    T("frozen request", "request", "request/frozen: the exact request of one attempt, fixed before it goes to the "
      "adapter — provider, model and messageSeqs.", ("request/frozen", "frozen")),
    T("messageSeqs", "request", "The seqs of the surface events a frozen request's messages came from: which "
      "messages the model saw, in order.", ("message_seqs",)),
    T("message history", "request", "The first view: the messages derive_messages() gives — only user / assistant / "
      "tool; the system prompt and runtime-context wrappers are hidden unless you show them.", ("history",)),
    T("runtime-context wrapper", "request", "A user message the harness adds (source kind plugin) carrying runtime "
      "state — the workspace, the date — deduplicated when unchanged (RuntimeContextProjection), entered before the "
      "step's input so that a request ends with the user's prompt. Hidden in the history by default.", ("runtime-context", "runtime context", "wrapper", "wrappers")),
    T("tool call", "request", "The model's request to run a tool: a tool-call block with an id (c1), a name and "
      "its raw JSON arguments, then a tool/call event.", ("tool-call", "tool-call block", "call id", "callId")),
    T("tool result", "request", "What the tool returned, as a tool message in tool/result; every call gets exactly "
      "one, even when it failed, was denied or cancelled. “The tool ran”, “the tests passed” and “the goal is "
      "reached” are three different judgements.", ("tool/result", "result")),
    T("Inbox", "request", "Where a prompt waits until it takes effect: queued for the next turn, or (steer) joined "
      "into the next step (agent/inbox/spliced).", ("steer", "queue")),
    # -- the path of a prompt -----------------------------------------------------------------------
    T("Prompt command", "host", "{sessionId, requestId, mode, content}: what the client sends for one submission "
      "(L1). A repeated requestId with the same content is accepted once.", ("requestId",)),
    T("envelope", "host", "The JSON shell of a call over the wire: client-request {type, rpcId, method, payload}, "
      "answered by server-response with the same rpcId (L2).", ("client-request", "server-response", "rpcId")),
    T("Gateway", "host", "The host's dispatcher: endpoint → Service method (L3), with the caller and cancel signal "
      "of each invocation."),
    T("accepted", "host", "session/prompt answers {accepted: true} when the prompt is admitted — not when the "
      "agent is done. The answer arrives later, through follow.",),
    T("follow", "host", "session/follow: a stream that first sends a snapshot of the session, then every new event "
      "and the live frames (assistant text as it streams, tool progress). Closing it does not cancel the run.",
      ("session/follow", "session.follow")),
    T("snapshot", "host", "The first item of a follow stream: the session's header, its events from the cursor on, "
      "and the live state (running or idle, pending approvals)."),
    T("cursor", "host", "The last seq a client has folded; a follow opened from a cursor sends only what came "
      "after, so a reloaded widget catches up without repeats."),
    T("control", "host", "session/control: the host-wide state of sessions (status, queues) as a stream.",
      ("session/control", "session.control")),
    T("client model", "host", "The fold that turns follow items into view state (the JS and Python folds are "
      "checked equal on recorded runs); the cell, the CLI and the widgets all read it.", ("fold",)),
    # -- the widgets --------------------------------------------------------------------------------
    T("event payloads", "ui", "The second view: the JSON of this call's events as committed to the log; events that "
      "have not happened at the selected stage are not shown as committed.", ("payloads",)),
    T("live / replay", "ui", "Live: the widget follows the run as it happens. Replay: it plays a finished call stage "
      "by stage (play, back, forward, or click a stage).", ("live", "replay", "playback")),
    T("inspector", "ui", "The session inspector: every event of the log, filters, search, jump to a seq, "
      "provenance both ways, the messages at any seq and the diff between frozen requests.", ("session inspector",)),
    T("breakpoint", "ui", "A stage (01–06) at which a live run pauses, optionally only for given tools: %dsh "
      "--break 03,06, the pause toggles on the stage cards, or session/debug {action: break}. While paused nothing "
      "of the run advances; cancel still works.", ("breakpoints", "pause at stage", "paused")),
    T("step / continue", "ui", "While paused: step runs to the next stage, continue to the next breakpoint.",
      ("continue",)),
    T("debug/edit", "log", "The event an edit made while paused writes: its target (arguments, result or request), "
      "before, after and by; what it changed cites it, and the model sees the edited content.", ("edit",)),
    T("fork", "log", "A new session whose log repeats events 0..SEQ of another (fork ID --at SEQ), closes what was "
      "open there the way crash repair does and records session/forked {from, at}.", ("session/forked",)),
    T("replay model", "request", "--model replay:<origin id>: answers a fork's requests with the origin's recorded "
      "responses while the requests match, and stops with REPLAY_DIVERGED where they differ.", ("replay:",)),
    T("compare", "ui", "%dsh compare A B / compare A B: two sessions aligned by turn and step, the first divergent "
      "request and its message diff."),
    T("predict, then reveal", "ui", "A replay mode that asks what comes next (the tool arguments, the "
      "sourceEventSeqs, the messages of the next request) before a stage is shown, then shows this run's values "
      "beside the guess.", ("predict",)),
    T("execution mode", "request", "How the scheduler runs a step's tool calls: calls that are safe to run together "
      "(read, grep, glob) share a small parallel pool; any other call (bash, write, edit) is a barrier.",
      ("execution modes",)),
    T("barrier", "request", "A tool call that runs alone: the calls before it finish first and the calls after it wait "
      "(bash, write, edit, python — anything that may change the workspace). Results still commit in the model's "
      "call order.", ("barriers",)),
    T("request id (req_…)", "host", "The id the prompt box gives each prompt it sends (req_ and random letters): "
      "the Host's reply, the user message it becomes and the status line all name it, so an answer is matched to "
      "its prompt.", ("request id", "req_")),
    T("presenter mode", "ui", "The widgets for a projector: text at least 18 px (A+ for more), the narration as a "
      "large caption, the stages as a grid, each stage held until next; PageDown / ArrowRight / Space next, "
      "PageUp / ArrowLeft back, Home / End, L live (a presenter's remote sends these keys).",
      ("present", "clicker")),
    T("reading pace", "ui", "Playback that keeps each stage at least as long as its narration takes to read: about "
      "200 words a minute at 1×, shorter at 2× and 4×.", ("hold",)),
    T("new at this stage", "ui", "The history mark of a message whose event happened at the stage shown: the "
      "assistant message at 01, the tool message at 04.", ("new",)),
    T("in this request", "ui", "The mark at 06 of the messages the frozen request carries that the previous request "
      "did not: what the model sees for the first time.", ()),
    T("estimated tokens", "ui", "Token counts the offline teaching model (script:*) estimates at about four "
      "characters a token (≈ …); it costs $0 — offline, and its 128k context window is nominal.",
      ("estimated", "nominal context window", "offline")),
    T("export-html", "ui", "python -m dsh_notebook export-html ID -o FILE.html: one self-contained page that replays "
      "the loop widget and the inspector of a session with no kernel and no network."),
)


def by_name() -> dict[str, Term]:
    """Every spelling (term and aliases, lower-cased) → its term."""
    out: dict[str, Term] = {}
    for t in TERMS:
        for name in (t.term, *t.aliases):
            out.setdefault(name.lower(), t)
    return out


ROOT = Path(__file__).resolve().parent.parent
MD_FILE = ROOT / "notebooks" / "glossary.md"


def to_typescript() -> str:
    rows = [{"term": t.term, "topic": t.topic, "definition": t.definition, "aliases": list(t.aliases),
             "anchor": t.anchor} for t in TERMS]
    return ("// Generated by `python -m dsh_notebook.glossary` from dsh_notebook/glossary.py. Do not edit.\n"
            "export interface GlossaryTerm { term: string; topic: string; definition: string; aliases: string[]; anchor: string }\n"
            f"export const TOPICS: Record<string, string> = {json.dumps(TOPIC_TITLES, ensure_ascii=False)};\n"
            f"export const GLOSSARY: GlossaryTerm[] = {json.dumps(rows, ensure_ascii=False, indent=1)};\n")


def to_markdown() -> str:
    out = ["# Glossary", "",
           "Every word of the seeds a learner meets in the widgets and the walkthrough notebooks. The widgets' "
           "**Glossary** button shows the same list (generated from `dsh_notebook/glossary.py`).", ""]
    for topic, title in TOPIC_TITLES.items():
        out += [f"## {title}", ""]
        for t in (t for t in TERMS if t.topic == topic):
            also = f" *(also: {', '.join(t.aliases)})*" if t.aliases else ""
            out.append(f'- <a id="{t.anchor}"></a>**{t.term}** — {t.definition}{also}')
        out.append("")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if "--typescript" in argv:
        sys.stdout.write(to_typescript())
        return 0
    wanted = {MD_FILE: to_markdown()}
    if "--check" in argv:
        stale = [str(p) for p, text in wanted.items() if not p.exists() or p.read_text() != text]
        for p in stale:
            print(f"out of date: {p} (run python -m dsh_notebook.glossary)", file=sys.stderr)
        return 1 if stale else 0
    for path, text in wanted.items():
        path.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
