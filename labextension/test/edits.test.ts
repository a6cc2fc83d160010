import type { IDocumentManager } from '@jupyterlab/docmanager';
import type { NotebookPanel } from '@jupyterlab/notebook';
import { describe, expect, it } from 'vitest';

import { apply, read, save, type Op } from '../src/edits';
import type { JsonValue } from '../src/pages.gen';
import { CodedError } from '../src/socket';
import { code, markdown, notebookPanel, type FakePanel } from './fakes';

type Cell = { [k: string]: JsonValue };
const wire = (cell: object): Cell => cell as Cell;
const sources = (p: FakePanel): string[] => p.nb.cells.map(c => c.getSource());
const cellIds = (p: FakePanel): string[] => p.nb.cells.map(c => c.getId());

async function conflict(p: FakePanel, ops: Op[]): Promise<CodedError> {
  const before = JSON.stringify(p.nb.toJSON());
  const updates: number[] = [];
  p.nb.ydoc.on('update', () => updates.push(1));
  const err = await apply(p.panel, ops).then(() => null, (e: unknown) => e);
  expect(err).toBeInstanceOf(CodedError);
  expect((err as CodedError).code).toBe('EDIT_CONFLICT');
  expect(JSON.stringify(p.nb.toJSON())).toBe(before);  // nothing changed, not even in part
  expect(updates).toEqual([]);
  expect(p.saves).toBe(0);
  return err as CodedError;
}

describe('apply: inserts', () => {
  it('inserts after the cell with the id it names, and first after null', async () => {
    const p = notebookPanel([code('a', 'x = 1'), code('b', 'y = 2')]);
    await apply(p.panel, [
      { op: 'insert', after: 'a', cell: wire(code('n1', 'print(x)')) },
      { op: 'insert', after: null, cell: wire(markdown('n0', '# Title')) }
    ]);
    expect(cellIds(p)).toEqual(['n0', 'a', 'n1', 'b']);
    expect(sources(p)).toEqual(['# Title', 'x = 1', 'print(x)', 'y = 2']);
    expect(p.nb.cells[0].cell_type).toBe('markdown');
  });

  it('chains inserts: a new cell may follow one inserted earlier in the same list', async () => {
    const p = notebookPanel([code('a', 'x = 1')]);
    await apply(p.panel, [
      { op: 'insert', after: 'a', cell: wire(code('n1', 'one')) },
      { op: 'insert', after: 'n1', cell: wire(code('n2', 'two')) }
    ]);
    expect(cellIds(p)).toEqual(['a', 'n1', 'n2']);
  });

  it('keeps a code cell\'s outputs, execution count and metadata', async () => {
    const p = notebookPanel([code('a', 'x = 1')]);
    const output = { output_type: 'stream', name: 'stdout', text: 'hi\n' };
    const prov = { dsh: { provenance: { callId: 'x1', tool: 'insert_cell' } } };
    await apply(p.panel, [{
      op: 'insert', after: 'a',
      cell: wire(code('n1', ['print(', '"hi")'].join(''), { outputs: [output], execution_count: 4, metadata: prov }))
    }]);
    const cell = p.nb.toJSON().cells[1];
    expect(cell).toMatchObject({ id: 'n1', source: 'print("hi")', execution_count: 4, outputs: [output], metadata: prov });
  });

  it('refuses an insert after a cell deleted since the read: EDIT_CONFLICT, nothing changed', async () => {
    const p = notebookPanel([code('a', 'x = 1'), code('b', 'y = 2')]);
    const err = await conflict(p, [
      { op: 'insert', after: 'a', cell: wire(code('n1', 'fine')) },  // valid on its own
      { op: 'insert', after: 'gone', cell: wire(code('n2', 'lost')) }
    ]);
    expect(err.message).toContain('gone');
    expect(err.message).toContain('deleted');
  });
});

describe('apply: replaces', () => {
  it('replaces the cell with the id when its source is still what was read', async () => {
    const p = notebookPanel([code('a', 'x = 1'), code('b', 'y = 2')]);
    await apply(p.panel, [{ op: 'replace', id: 'b', expect: 'y = 2', cell: wire(code('b', 'y = 3', { execution_count: 2 })) }]);
    expect(sources(p)).toEqual(['x = 1', 'y = 3']);
    expect(cellIds(p)).toEqual(['a', 'b']);
    expect(p.nb.toJSON().cells[1]).toMatchObject({ execution_count: 2, outputs: [] });
  });

  it('replaces outputs, execution count and metadata of a code cell, and a source given as lines', async () => {
    const out = { output_type: 'execute_result', data: { 'text/plain': '3' }, metadata: {}, execution_count: 7 };
    const p = notebookPanel([code('a', 'x', { outputs: [{ output_type: 'stream', name: 'stdout', text: 'old' }], execution_count: 1 })]);
    const meta = { tags: ['t'], dsh: { provenance: { tool: 'edit_cell' } } };
    await apply(p.panel, [{
      op: 'replace', id: 'a', expect: 'x',
      cell: wire({ ...code('a', ''), source: ['1 +\n', '2'], outputs: [out], execution_count: 7, metadata: meta })
    }]);
    expect(p.nb.toJSON().cells[0]).toMatchObject({ source: '1 +\n2', outputs: [out], execution_count: 7, metadata: meta });
  });

  it('replaces a cell by one of another type, keeping its place and id', async () => {
    const p = notebookPanel([code('a', 'x = 1'), code('b', 'notes'), code('c', 'z')]);
    await apply(p.panel, [{ op: 'replace', id: 'b', expect: 'notes', cell: wire(markdown('b', '## Notes')) }]);
    expect(p.nb.cells.map(c => c.cell_type)).toEqual(['code', 'markdown', 'code']);
    expect(cellIds(p)).toEqual(['a', 'b', 'c']);
    expect(sources(p)).toEqual(['x = 1', '## Notes', 'z']);
  });

  it('retypes the right cell after an insert earlier in the list (no other cell deleted)', async () => {
    // the shared model's `cells` follows its Yjs array only when the transaction ends: an index
    // taken from it after an insert in the same transaction points one cell too early
    const p = notebookPanel([code('a', 'x = 1'), code('b', 'notes'), code('c', 'z')]);
    await apply(p.panel, [
      { op: 'insert', after: null, cell: wire(code('n0', 'import os')) },
      { op: 'replace', id: 'b', expect: 'notes', cell: wire(markdown('b', '## Notes')) },
      { op: 'insert', after: 'b', cell: wire(code('n1', 'print(x)')) }
    ]);
    expect(cellIds(p)).toEqual(['n0', 'a', 'b', 'n1', 'c']);
    expect(sources(p)).toEqual(['import os', 'x = 1', '## Notes', 'print(x)', 'z']);
    expect(p.nb.cells[2].cell_type).toBe('markdown');
  });

  it('refuses a replace of a cell the person changed since the read, even after a valid op', async () => {
    const p = notebookPanel([code('a', 'x = 1'), code('b', 'y = 2')]);
    p.nb.cells[1].setSource('y = 2  # typing');
    p.dirty = false;
    const err = await conflict(p, [
      { op: 'insert', after: null, cell: wire(code('n0', 'import os')) },
      { op: 'replace', id: 'a', expect: 'x = 1', cell: wire(code('a', 'x = 10')) },
      { op: 'replace', id: 'b', expect: 'y = 2', cell: wire(code('b', 'y = 20')) }
    ]);
    expect(err.message).toMatch(/cell b of work\/analysis\.ipynb was changed/);
  });

  it('refuses a replace of a cell the person deleted since the read', async () => {
    const p = notebookPanel([code('a', 'x = 1'), code('b', 'y = 2')]);
    p.nb.deleteCell(1);
    p.dirty = false;
    const err = await conflict(p, [
      { op: 'replace', id: 'a', expect: 'x = 1', cell: wire(code('a', 'x = 10')) },
      { op: 'replace', id: 'b', expect: 'y = 2', cell: wire(code('b', 'y = 20')) }
    ]);
    expect(err.message).toContain('cell b was deleted');
  });
});

describe('apply: one change of the shared model', () => {
  const ops: Op[] = [
    { op: 'insert', after: null, cell: wire(code('n0', 'import os')) },
    { op: 'replace', id: 'a', expect: 'x = 1', cell: wire(code('a', 'x = 10')) },
    { op: 'replace', id: 'b', expect: 'y', cell: wire(markdown('b', 'text')) },
    { op: 'insert', after: 'b', cell: wire(code('n1', 'print(x)')) }
  ];

  it('makes all ops in one transaction: one Yjs update', async () => {
    const p = notebookPanel([code('a', 'x = 1'), code('b', 'y')]);
    let updates = 0;
    p.nb.ydoc.on('update', () => { updates += 1; });
    await apply(p.panel, ops);
    expect(updates).toBe(1);
    expect(cellIds(p)).toEqual(['n0', 'a', 'b', 'n1']);
  });

  it('is taken back by one Undo of the notebook', async () => {
    const p = notebookPanel([code('a', 'x = 1'), code('b', 'y')]);
    const before = p.nb.toJSON();
    await apply(p.panel, ops);
    expect(p.nb.undoManager.undoStack).toHaveLength(1);
    p.nb.undoManager.undo();
    expect(p.nb.toJSON()).toEqual(before);
  });
});

describe('apply and save: saving', () => {
  it('saves after the change when the person had nothing unsaved', async () => {
    const p = notebookPanel([code('a', 'x = 1')]);
    const done = await apply(p.panel, [{ op: 'insert', after: 'a', cell: wire(code('n', 'y')) }]);
    expect(done).toEqual({ saved: true, dirty: false });
    expect(p.saves).toBe(1);
  });

  it('leaves the notebook unsaved when the person had unsaved changes in it', async () => {
    const p = notebookPanel([code('a', 'x = 1')]);
    p.nb.cells[0].setSource('x = 2');  // typed, not saved
    const done = await apply(p.panel, [{ op: 'insert', after: 'a', cell: wire(code('n', 'y')) }]);
    expect(done).toEqual({ saved: false, dirty: true });
    expect(p.saves).toBe(0);
  });

  it('save saves unsaved changes when autosave is on, and not when the person turned it off', async () => {
    const on = { autosave: true } as IDocumentManager;
    const off = { autosave: false } as IDocumentManager;
    const p = notebookPanel([code('a', 'x = 1')]);
    expect(await save(p.panel, on)).toEqual({ saved: false, dirty: false });  // nothing to save
    expect(p.saves).toBe(0);
    p.nb.cells[0].setSource('x = 2');
    expect(await save(p.panel, off)).toEqual({ saved: false, dirty: true });
    expect(p.saves).toBe(0);
    expect(await save(p.panel, on)).toEqual({ saved: true, dirty: false });
    expect(p.saves).toBe(1);
  });
});

describe('read', () => {
  it('reads the notebook as the page has it, with its unsaved state', async () => {
    const p = notebookPanel([code('a', 'x = 1')]);
    p.nb.cells[0].setSource('x = 2');
    const page = await read(p.panel);
    expect(page.dirty).toBe(true);
    expect(page.notebook).toMatchObject({ nbformat: 4, cells: [{ id: 'a', source: 'x = 2', cell_type: 'code' }] });
  });

  it('is PAGE_GONE, not a TypeError, once the notebook is closing (its model gone)', async () => {
    const p = notebookPanel([code('a', 'x = 1')]);
    const closing = { context: p.panel.context, content: { model: null } } as unknown as NotebookPanel;
    for (const call of [() => read(closing), () => apply(closing, [])]) {
      const err = await call().then(() => null, (e: unknown) => e);
      expect(err).toBeInstanceOf(CodedError);
      expect((err as CodedError).code).toBe('PAGE_GONE');
    }
  });
});
