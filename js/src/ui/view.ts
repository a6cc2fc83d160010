// What a view of the loop widget is given on every render and what it gives back: the contract
// of a row of the views table (ui/views.ts). The loop owns the position (call, stage, seq), the
// predict mask and the live attempt; a view owns its own state (a toggle, a scroll position, a
// card to flash) and draws into the tab panel it is handed.
import type { DerivedMessage } from "../model/history";
import type { PagedHistory } from "../model/history-focus";
import type { PredictMask } from "../model/predict-mask";
import type { Question } from "../model/predict";
import type { StageNo, ToolCallTrace } from "../model/stages";
import type { SessionEvent, StreamingAttempt } from "../types";

export interface ViewInput {
  events: readonly SessionEvent[];
  /** The call at the shown position, as the log has it. */
  call: ToolCallTrace | undefined;
  /** The same call as shown: its arguments masked while a predict question asks for them. */
  shownCall: ToolCallTrace | undefined;
  stage: StageNo | 0;
  /** The log position shown: nothing later is on screen. */
  seq: number;
  /** derive_messages() at the shown position. */
  derived: DerivedMessage[];
  mask: PredictMask | null;
  /** The predict question open at this step, if any. */
  question: Question | null;
  /** The model's attempt streaming now (live and caught up), else null. */
  attempt: StreamingAttempt | null;
  /** The session's permission mode, once known. */
  sessionMode?: string;
  /** The seqs of the events that cite `seq` (sourceEventSeqs). */
  citing(seq: number): number[];
  /** A long session (data/loop-window.ts): the history view's page of messages, from the kernel,
   *  instead of what `derived` and `events` give. */
  history?: PagedView;
}

/** A page of the messages at the shown position (derived, or the frozen request's at 06): the
 *  `earlier` ones before it and the `later` ones after it reached by `onEarlier` / `onLater`. */
export interface PagedView {
  messages: DerivedMessage[];
  /** The page is on its way (the one shown is the last that came). */
  loading: boolean;
  earlier: number;
  later: number;
  paged?: PagedHistory;
  onEarlier?: () => void;
  onLater?: () => void;
}

/** What the loop offers a view: render again (after the view's own state changed), and switch the
 *  widget to this view (its views shown, in presenter mode too). */
export interface ViewHost {
  schedule(): void;
  open(): void;
}

export interface View {
  /** Draw the view into `panel` (its role="tabpanel"), replacing what was there. */
  render(panel: HTMLElement, input: ViewInput): void;
  /** Another view was chosen: forget what only matters while this one is shown. */
  leave?(): void;
}

/** One row of the views table. */
export interface ViewRow {
  /** The tab's label. */
  tab: string;
  /** The diagram's link to it (`→ link`) on the stages STAGE_VIEW sends here. */
  link: string;
  create(host: ViewHost): View;
}
