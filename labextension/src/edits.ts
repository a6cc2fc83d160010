/**
 * An open notebook read, saved and changed for an external agent (issue 41). The server runs the
 * tool's edit on what `read` returned and sends the difference, cell by id: `insert` (after the
 * cell `after`, or first) and `replace` (the cell whose source is still `expect`). Every op is
 * checked before any is made — a cell the person changed or deleted meanwhile is `EDIT_CONFLICT`
 * and nothing changes — and all are made in one transaction of the notebook's shared model (the
 * person sees the cell appear; Undo in the notebook takes it back). The notebook is saved after
 * the change when the person had nothing unsaved in it.
 *
 * Notebooks and cells travel as JSON objects (the wire's `JsonValue`); here they are JupyterLab's
 * own nbformat types — the same JSON, typed twice: {@link toWire} and {@link fromWire} say so.
 */
import type { IDocumentManager } from '@jupyterlab/docmanager';
import type { NotebookPanel } from '@jupyterlab/notebook';
import type { ISharedCell, ISharedCodeCell, ISharedNotebook } from '@jupyter/ydoc';
import type * as nbformat from '@jupyterlab/nbformat';

import type { CellInsert, CellReplace, JsonValue, PageNotebook, PageSaved } from './pages.gen';
import { CodedError } from './socket';

export type Op = CellInsert | CellReplace;
type JsonObject = { [k: string]: JsonValue };

/** The notebook model's JSON (an nbformat 4 notebook) as the wire's JSON object. */
const toWire = (nb: ReturnType<NonNullable<NotebookPanel['content']['model']>['toJSON']>): JsonObject =>
  nb as unknown as JsonObject;
/** A cell of the wire as JupyterLab's nbformat type (the server made it from an nbformat 4 cell). */
const fromWire = (cell: JsonObject): nbformat.ICell => cell as unknown as nbformat.ICell;

function shared(panel: NotebookPanel): ISharedNotebook {
  const model = panel.content.model;
  if (!model) throw new CodedError('PAGE_GONE', `${panel.context.path} is closing in JupyterLab`);
  return model.sharedModel;
}

const ids = (nb: ISharedNotebook): string[] => nb.cells.map(c => c.getId());

export async function read(panel: NotebookPanel): Promise<PageNotebook> {
  await panel.context.ready;
  shared(panel);  // PAGE_GONE while it closes
  return { notebook: toWire(panel.content.model!.toJSON()), dirty: panel.context.model.dirty };
}

/** Save the person's unsaved changes, as autosave would (not when they turned autosave off). */
export async function save(panel: NotebookPanel, docs: IDocumentManager): Promise<PageSaved> {
  await panel.context.ready;
  const dirty = panel.context.model.dirty;
  if (dirty && docs.autosave) await panel.context.save();
  return { saved: dirty && docs.autosave, dirty: panel.context.model.dirty };
}

function check(nb: ISharedNotebook, ops: Op[], path: string): void {
  const present = new Set(ids(nb));
  for (const op of ops) {
    if (op.op === 'replace') {
      const cell = nb.cells.find(c => c.getId() === op.id);
      if (!cell) {
        throw new CodedError('EDIT_CONFLICT', `cell ${op.id} was deleted in JupyterLab since it was read: nothing was changed`);
      }
      if (cell.getSource() !== op.expect) {
        throw new CodedError('EDIT_CONFLICT', `cell ${op.id} of ${path} was changed in JupyterLab since it was read ` +
          '(the person is editing it): nothing was changed; read it again');
      }
    } else {
      if (op.after !== null && !present.has(op.after)) {
        throw new CodedError('EDIT_CONFLICT', `cell ${op.after}, which the new cell was to follow, was deleted in ` +
          'JupyterLab since it was read: nothing was changed');
      }
      if (typeof op.cell.id === 'string') present.add(op.cell.id);
    }
  }
}

/** Replace `current`, the cell at `index`, by `cell`; returns the cell now at `index`. */
function replace(nb: ISharedNotebook, index: number, current: ISharedCell, cell: nbformat.ICell): ISharedCell {
  if (current.cell_type !== cell.cell_type) {
    nb.deleteCell(index);
    return nb.insertCell(index, cell as any);
  }
  current.setSource(typeof cell.source === 'string' ? cell.source : cell.source.join(''));
  current.setMetadata(cell.metadata as any);
  if (current.cell_type === 'code') {
    const code = current as ISharedCodeCell;
    code.setOutputs(((cell as nbformat.ICodeCell).outputs ?? []) as nbformat.IOutput[]);
    code.execution_count = (cell as nbformat.ICodeCell).execution_count ?? null;
  }
  return current;
}

/** Make `ops`, in one transaction. The shared model's `cells` follows its Yjs array only when the
 * transaction ends, so the cells as they become are kept here, op by op: an insert after a cell
 * inserted (or retyped) earlier in the list finds it, and an index is never a stale one. */
function make(nb: ISharedNotebook, ops: Op[]): void {
  const cells = [...nb.cells];
  const at = (id: string): number => cells.findIndex(c => c.getId() === id);
  nb.transact(() => {
    for (const op of ops) {
      if (op.op === 'insert') {
        const index = op.after === null ? 0 : at(op.after) + 1;
        cells.splice(index, 0, nb.insertCell(index, fromWire(op.cell) as any));
      } else {
        const index = at(op.id);
        cells[index] = replace(nb, index, cells[index], fromWire(op.cell));
      }
    }
  });
}

export async function apply(panel: NotebookPanel, ops: Op[]): Promise<PageSaved> {
  await panel.context.ready;
  const nb = shared(panel);
  check(nb, ops, panel.context.path);
  const dirty = panel.context.model.dirty;
  make(nb, ops);
  if (!dirty) await panel.context.save();
  return { saved: !dirty, dirty: panel.context.model.dirty };
}
