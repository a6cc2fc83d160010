/**
 * The boundary fakes of the extension's unit tests: the smallest objects with the fields the
 * modules read from JupyterLab (a NotebookPanel, its context, the document manager). What they
 * wrap is real: `@jupyter/ydoc`'s YNotebook (the shared model JupyterLab's notebook model is built
 * on) and Lumino widgets.
 */
import { YNotebook } from '@jupyter/ydoc';
import type * as nbformat from '@jupyterlab/nbformat';
import type { NotebookPanel } from '@jupyterlab/notebook';

/** A notebook panel over a real YNotebook: `dirty` follows the shared model as JupyterLab's
 * document model does (any change makes it dirty; a save makes it clean), `saves` counts saves. */
export interface FakePanel {
  panel: NotebookPanel;
  nb: YNotebook;
  saves: number;
  dirty: boolean;
}

export function code(id: string, source: string, extra: Partial<nbformat.ICodeCell> = {}): nbformat.ICodeCell {
  return { cell_type: 'code', id, source, metadata: {}, outputs: [], execution_count: null, ...extra };
}

export function markdown(id: string, source: string): nbformat.IMarkdownCell {
  return { cell_type: 'markdown', id, source, metadata: {} };
}

export function notebookPanel(cells: nbformat.ICell[], path = 'work/analysis.ipynb'): FakePanel {
  const nb = YNotebook.create({ data: { cells, metadata: {}, nbformat: 4, nbformat_minor: 5 } });
  nb.undoManager.clear();  // the notebook as loaded: nothing to undo yet
  const state = { nb, saves: 0, dirty: false } as FakePanel;
  nb.ydoc.on('update', () => { state.dirty = true; });
  const context = {
    ready: Promise.resolve(),
    path,
    model: { get dirty() { return state.dirty; } },
    async save() {
      state.saves += 1;
      state.dirty = false;
    }
  };
  const content = { model: { sharedModel: nb, toJSON: () => nb.toJSON() } };
  state.panel = { context, content } as unknown as NotebookPanel;
  return state;
}
