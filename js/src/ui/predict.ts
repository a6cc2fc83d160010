// The predict-then-reveal panel: the question before a stage (free text / JSON, or checkboxes of
// seqs), then this run's real values beside the guess, each row marked match / mismatch — for a
// class vote, as the presenter marks it (issue 37 item 4). "Not sure" reveals and counts as
// asked. The panel is a focus group (ui/focus.ts): after "Reveal" the focus goes to
// "Continue" (its arrow an icon), which a clicker's Space presses; a clicker's "next" on a question reveals it.
import type { Guess, Question, Reveal, Score } from "../model/predict";
import { h, replace } from "./dom";
import { icon, iconLabel } from "./icons";

export interface PredictCallbacks {
  answer(guess: Guess): void;
  /** Continue after a reveal (play on, or step on in step-only mode). */
  next(): void;
  /** "Class vote, then reveal": mark the class's vote right or wrong. */
  judge(right: boolean): void;
  /** Switch between a guess typed in and a class vote. */
  setVote(on: boolean): void;
}

function scoreEl(score: Score): HTMLElement {
  return h("div", { class: "dsh-predict-score", "data-right": score.right, "data-asked": score.asked },
    `score: ${score.right} / ${score.asked} right`);
}

function voteToggle(vote: boolean, cb: PredictCallbacks): HTMLElement {
  const box = h("input", { type: "checkbox", class: "dsh-predict-vote" }) as HTMLInputElement;
  box.checked = vote;
  box.addEventListener("change", () => cb.setVote(box.checked));
  return h("label", { class: "dsh-toggle", title: "no input: the class votes aloud, then you reveal and mark the vote" }, box, " class vote, then reveal");
}

function questionEl(q: Question, cb: PredictCallbacks, vote: boolean, score: Score): HTMLElement {
  const submit = h("button", { class: "dsh-btn dsh-predict-submit", type: "button", "data-focus-first": "" }, "Reveal");
  const skip = h("button", { class: "dsh-btn dsh-predict-skip", type: "button", title: "show the answer; the question counts as asked, not as right" }, "Not sure — reveal");
  skip.addEventListener("click", () => cb.answer({ kind: "unsure" }));
  let input: HTMLElement;
  if (vote) {
    submit.addEventListener("click", () => cb.answer({ kind: "vote" }));
    input = q.options.length
      ? h("ol", { class: "dsh-predict-options dsh-predict-vote-options", "aria-label": "the choices to vote on" }, ...q.options.map((o) => h("li", { class: "dsh-predict-choice" }, o.label)))
      : h("div", { class: "dsh-predict-vote-note" }, "Vote aloud or write the guesses on the board, then reveal.");
  } else if (q.kind === "arguments") {
    const ta = h("textarea", { class: "dsh-predict-input", rows: 3, "aria-label": "your guess of the arguments", placeholder: "JSON ({…}) or free text" }) as HTMLTextAreaElement;
    submit.addEventListener("click", () => cb.answer({ kind: "arguments", text: ta.value }));
    input = ta;
  } else {
    const boxes = q.options.map((o) => {
      const box = h("input", { type: "checkbox", class: "dsh-predict-option", value: o.seq, "data-seq": o.seq }) as HTMLInputElement;
      return { box, el: h("label", { class: "dsh-predict-choice" }, box, ` ${o.label}`) };
    });
    submit.addEventListener("click", () => cb.answer({ kind: q.kind as "sources" | "messages", seqs: boxes.filter((b) => b.box.checked).map((b) => Number(b.box.value)) }));
    input = h("div", { class: "dsh-predict-options", role: "group", "aria-label": "your guess" }, ...boxes.map((b) => b.el));
  }
  return h("div", { class: "dsh-predict-ask", "data-kind": q.kind, "data-vote": String(vote) },
    h("div", { class: "dsh-predict-title" }, `Predict · ${q.name} · ${q.callId}`),
    h("div", { class: "dsh-predict-prompt" }, q.prompt), input,
    h("div", { class: "dsh-predict-buttons" }, submit, vote ? null : skip, voteToggle(vote, cb)), scoreEl(score));
}

function revealEl(r: Reveal, cb: PredictCallbacks, score: Score): HTMLElement {
  const g = r.guess;
  const guessText = g.kind === "unsure" ? "(not sure)" : g.kind === "vote" ? "(class vote)" : g.kind === "arguments" ? g.text || "(empty)" : `[${g.seqs.join(", ")}]`;
  const next = h("button", { class: "dsh-btn dsh-predict-next", type: "button", "data-focus-first": "" });
  iconLabel(next, "next", "Continue", true);
  next.addEventListener("click", () => cb.next());
  // a class vote not marked yet: "?" on every row, until the presenter's check or cross (then all follow it)
  const mark = (m: boolean | null) => m === null
    ? h("span", { class: "dsh-mark dsh-unmarked", "aria-label": "not marked yet" }, "?")
    : h("span", { class: `dsh-mark ${m ? "dsh-match" : "dsh-mismatch"}`, "aria-label": m ? "match" : "mismatch", role: "img" }, icon(m ? "check" : "cross"));
  const voting = g.kind === "vote" && !r.judged;
  const judge = (right: boolean) => {
    const b = h("button", { class: `dsh-btn dsh-predict-judge`, type: "button", "data-right": String(right) });
    iconLabel(b, right ? "check" : "cross", right ? "the class got it" : "the class missed it", true);
    b.addEventListener("click", () => cb.judge(right));
    return b;
  };
  const title = g.kind === "vote" ? (voting ? "This run's values: was the class right?" : r.match ? "The class got it" : "The class missed it")
    : r.match ? "Your guess matches this run" : g.kind === "unsure" ? "Not sure — this run's values" : "Not quite — this run's values beside your guess";
  return h("div", { class: "dsh-predict-reveal", "data-kind": r.question.kind, "data-match": voting ? "pending" : r.match ? "true" : "false" },
    h("div", { class: "dsh-predict-title" }, voting ? null : mark(r.match), ` ${title}`),
    h("table", { class: "dsh-predict-table" },
      h("thead", null, h("tr", null, h("th", null, ""), h("th", null, "your guess"), h("th", null, "this run"), h("th", null, ""))),
      h("tbody", null,
        h("tr", { class: "dsh-predict-row-all" }, h("td", null, r.question.kind === "arguments" ? "arguments" : r.question.kind === "sources" ? "sourceEventSeqs" : "messageSeqs"),
          h("td", null, h("code", null, guessText)), h("td", null, h("code", { class: "dsh-predict-real" }, r.real)), h("td", null, mark(voting ? null : r.match))),
        ...r.marks.map((m) => h("tr", { class: m.match ? "dsh-predict-ok" : "dsh-predict-bad" },
          h("td", null, m.label), h("td", null, m.guess), h("td", null, m.real), h("td", null, mark(m.match)))))),
    h("div", { class: "dsh-predict-buttons" }, ...(voting ? [judge(true), judge(false)] : []), next), scoreEl(score));
}

export interface PredictPanel {
  el: HTMLElement;
  update(q: Question | null, r: Reveal | null, score: Score, vote: boolean): void;
  /** A clicker's "next" on an open question: press its "Reveal" (what is typed or checked, or the
   *  class's vote). False when no question is open. */
  submit(): boolean;
}

/** A persistent panel: rebuilt only when the question or the reveal changes (typing survives renders). */
export function createPredictPanel(cb: PredictCallbacks): PredictPanel {
  const el = h("div", { class: "dsh-predict", role: "region", "aria-label": "predict, then reveal", "aria-live": "polite", hidden: true, "data-focus-group": "" });
  let key = "";
  return {
    el,
    submit() {
      const b = el.hidden ? null : el.querySelector<HTMLButtonElement>(".dsh-predict-ask .dsh-predict-submit");
      b?.click();
      return Boolean(b);
    },
    update(q, r, score, vote) {
      const k = q ? `q:${q.key}:${vote}` : r ? `r:${r.question.key}:${r.judged ?? ""}` : "";
      if (k === key) return;
      key = k;
      el.hidden = !k;
      if (q) replace(el, questionEl(q, cb, vote, score));
      else if (r) replace(el, revealEl(r, cb, score));
      else replace(el);
      // a new question takes the focus only from inside its widget (never from a cell being typed in)
      const root = el.closest(".dsh-root");
      if (q && root?.contains(el.ownerDocument.activeElement)) (el.querySelector("textarea, input.dsh-predict-option, .dsh-predict-submit") as HTMLElement | null)?.focus?.({ preventScroll: true });
    },
  };
}
