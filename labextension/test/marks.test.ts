import { YNotebook, type ISharedCell } from '@jupyter/ydoc';
import type { Cell } from '@jupyterlab/cells';
import type { NotebookPanel } from '@jupyterlab/notebook';
import { Signal } from '@lumino/signaling';
import { Widget } from '@lumino/widgets';
import { afterEach, beforeEach, describe as group, expect, it, vi } from 'vitest';

import { describe, provenanceOf, watchMarks } from '../src/marks';
import type { CellProvenance } from '../src/pages.gen';
import { code } from './fakes';

const full: CellProvenance = {
  client: { name: 'claude-code', version: '2.1.0' }, callId: 'x1a2', sessionId: 's-7', tool: 'insert_cell',
  time: '2026-12-07T14:00:00Z'
};

/** A cell widget as marks.ts sees it: a Lumino widget whose model is a real shared cell (a cell
 * model's getMetadata and metadataChanged are its shared cell's). */
class CellWidget extends Widget {
  constructor(readonly model: ISharedCell) {
    super();
  }
}

const cellWith = (metadata: unknown): Cell => {
  const nb = YNotebook.create({ data: { cells: [code('a', 'x')], metadata: {}, nbformat: 4, nbformat_minor: 5 } });
  if (metadata !== undefined) nb.cells[0].setMetadata('dsh', metadata as never);
  return new CellWidget(nb.cells[0]) as unknown as Cell;
};

group('describe', () => {
  it('says which tool, which external agent and which call', () => {
    expect(describe(full)).toBe('insert_cell by external agent claude-code 2.1.0 · call x1a2');
  });

  it('fills what a partial provenance lacks', () => {
    expect(describe({ tool: 'edit_cell', client: { name: 'cursor' } })).toBe('edit_cell by external agent cursor · call ?');
    expect(describe({ callId: 'c9', client: { name: 'codex', version: null } })).toBe('written by external agent codex · call c9');
  });

  it('names no one it does not know', () => {
    expect(describe({})).toBe('written by external agent an MCP client · call ?');
    expect(describe({ client: { name: '' } })).toBe('written by external agent an MCP client · call ?');
  });

  it('reads only text: hostile field values are left out, never shown as [object Object]', () => {
    const hostile = { tool: { x: 1 }, callId: ['a'], client: { name: { n: 1 }, version: 3 } } as never;
    expect(describe(hostile)).toBe('written by external agent an MCP client · call ?');
    expect(describe({ client: 'claude' } as never)).toBe('written by external agent an MCP client · call ?');
  });
});

group('provenanceOf', () => {
  it('reads metadata.dsh.provenance', () => {
    expect(provenanceOf(cellWith({ provenance: full }))).toEqual(full);
  });

  it.each([
    ['no dsh metadata', undefined],
    ['dsh a string', 'x'],
    ['dsh a number', 5],
    ['dsh null', null],
    ['dsh an array', [{ provenance: full }]],
    ['provenance a string', { provenance: 'claude' }],
    ['provenance an array', { provenance: [full] }],
    ['provenance null', { provenance: null }],
    ['provenance a number', { provenance: 0 }]
  ])('is null, never a throw, for %s', (_, dsh) => {
    expect(provenanceOf(cellWith(dsh))).toBeNull();
  });
});

group('watchMarks', () => {
  beforeEach(() => { vi.useFakeTimers({ toFake: ['requestAnimationFrame'] }); });
  afterEach(() => { vi.useRealTimers(); });

  /** A notebook panel as watchMarks reads it: the notebook widget's cells and model signals. */
  function panelOf(nb: YNotebook) {
    const widgets = nb.cells.map(c => new CellWidget(c));
    const model = { contentChanged: new Signal({}), cells: { changed: new Signal({}) }, metadataChanged: new Signal({}) };
    const content = { widgets, model, modelChanged: new Signal({}) };
    const panel = { isDisposed: false, content, context: { ready: Promise.resolve() } };
    return { panel, widgets, model, asPanel: panel as unknown as NotebookPanel };
  }
  const badges = (w: Widget) => Array.from(w.node.querySelectorAll(':scope > .dsh-provenance'));
  const frame = async () => {
    await Promise.resolve();  // context.ready's then
    vi.advanceTimersToNextFrame();
  };

  it('marks the cells with provenance once, follows their metadata, and unmarks them', async () => {
    const nb = YNotebook.create({ data: { cells: [code('a', 'x'), code('b', 'y')], metadata: {}, nbformat: 4, nbformat_minor: 5 } });
    nb.cells[1].setMetadata('dsh', { provenance: full } as never);
    const { widgets, model, asPanel } = panelOf(nb);
    watchMarks(asPanel);
    await frame();
    const [plain, written] = widgets;
    expect(badges(plain)).toHaveLength(0);
    expect(plain.hasClass('dsh-external-cell')).toBe(false);
    expect(badges(written)).toHaveLength(1);
    expect(written.hasClass('dsh-external-cell')).toBe(true);
    expect(written.node.firstChild).toBe(badges(written)[0]);
    expect(badges(written)[0].textContent).toBe('insert_cell by external agent claude-code 2.1.0 · call x1a2');
    expect((badges(written)[0] as HTMLElement).title).toBe('session s-7 · 2026-12-07T14:00:00Z (metadata.dsh.provenance)');

    // edit_cell writes new provenance into the cell's own metadata: the same badge, new text
    nb.cells[1].setMetadata('dsh', { provenance: { ...full, tool: 'edit_cell', callId: 'y9' } } as never);
    model.contentChanged.emit(undefined);  // several signals in one frame: one pass
    vi.advanceTimersToNextFrame();
    expect(badges(written)).toHaveLength(1);
    expect(badges(written)[0].textContent).toBe('edit_cell by external agent claude-code 2.1.0 · call y9');

    // the first cell gets provenance too; then the second loses it
    nb.cells[0].setMetadata('dsh', { provenance: { tool: 'edit_cell' } } as never);
    vi.advanceTimersToNextFrame();
    expect(badges(plain).map(b => b.textContent)).toEqual(['edit_cell by external agent an MCP client · call ?']);
    nb.cells[1].deleteMetadata('dsh');
    vi.advanceTimersToNextFrame();
    expect(badges(written)).toHaveLength(0);
    expect(written.hasClass('dsh-external-cell')).toBe(false);
    expect(badges(plain)).toHaveLength(1);
  });

  it('marks nothing once the panel is disposed', async () => {
    const nb = YNotebook.create({ data: { cells: [code('a', 'x')], metadata: {}, nbformat: 4, nbformat_minor: 5 } });
    const { panel, widgets, asPanel } = panelOf(nb);
    watchMarks(asPanel);
    await frame();
    panel.isDisposed = true;
    nb.cells[0].setMetadata('dsh', { provenance: full } as never);
    vi.advanceTimersToNextFrame();
    expect(badges(widgets[0])).toHaveLength(0);
  });
});
