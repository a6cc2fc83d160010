import type { NotebookPanel } from '@jupyterlab/notebook';
import type { Contents } from '@jupyterlab/services';
import { Signal } from '@lumino/signaling';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import { FileFollower } from '../src/watch';

type Model = Partial<Contents.IModel>;

/** The boundary: Jupyter's contents API as the page sees it — the file on disk, which the test
 * changes; `get` may be held open to stand for a slow server. */
class Disk {
  file: Model = { path: 'a.ipynb', hash: 'h1', last_modified: '2026-12-07T10:00:00Z' };
  gets = 0;
  failing = false;
  held: (() => void) | null = null;
  hold = false;

  readonly manager = {
    get: async (path: string, options: Contents.IFetchOptions) => {
      this.gets += 1;
      expect([path, options]).toEqual(['a.ipynb', { content: false, hash: true }]);
      if (this.hold) await new Promise<void>(resolve => { this.held = resolve; });
      if (this.failing) throw new Error('404 Not Found');
      return { ...this.file };
    }
  } as unknown as Contents.IManager;
}

/** A notebook panel as the follower reads it: its context (the model as loaded, dirty or not,
 * ready or not; revert loads the file again) and its disposal. */
function panelOn(disk: Disk) {
  const state = { dirty: false, reverts: 0, isDisposed: false };
  const disposed = new Signal<object, void>({});
  const context = {
    path: 'a.ipynb',
    isReady: true,
    contentsModel: { ...disk.file } as Model | null,
    model: { get dirty() { return state.dirty; } },
    async revert() {
      state.reverts += 1;
      context.contentsModel = { ...disk.file };
    }
  };
  const panel = { context, disposed, get isDisposed() { return state.isDisposed; } };
  const dispose = () => {
    state.isDisposed = true;
    disposed.emit();
  };
  return { state, context, dispose, asPanel: panel as unknown as NotebookPanel };
}

const tick = () => vi.advanceTimersByTimeAsync(1500);

let disk: Disk;
beforeEach(() => {
  vi.useFakeTimers();
  disk = new Disk();
});
afterEach(() => { vi.useRealTimers(); });

describe('following the file of a notebook an agent changed', () => {
  it('reloads the notebook when its file changed on disk, once', async () => {
    const p = panelOn(disk);
    new FileFollower(disk.manager).follow(p.asPanel);
    await tick();
    expect(disk.gets).toBe(1);
    expect(p.state.reverts).toBe(0);
    disk.file = { ...disk.file, hash: 'h2', last_modified: '2026-12-07T10:05:00Z' };  // %dsh undo
    await tick();
    expect(p.state.reverts).toBe(1);
    await tick();
    await tick();
    expect(p.state.reverts).toBe(1);
  });

  it('compares the modification times when the server gives no hash', async () => {
    disk.file = { path: 'a.ipynb', last_modified: '2026-12-07T10:00:00Z' };
    const p = panelOn(disk);
    new FileFollower(disk.manager).follow(p.asPanel);
    await tick();
    expect(p.state.reverts).toBe(0);
    disk.file = { ...disk.file, last_modified: '2026-12-07T10:05:00Z' };
    await tick();
    expect(p.state.reverts).toBe(1);
  });

  it('leaves a notebook with unsaved changes alone: the person decides', async () => {
    const p = panelOn(disk);
    p.state.dirty = true;
    new FileFollower(disk.manager).follow(p.asPanel);
    disk.file = { ...disk.file, hash: 'h2' };
    await tick();
    await tick();
    expect(disk.gets).toBe(0);
    expect(p.state.reverts).toBe(0);
  });

  it('does not reload when the person started typing while the server was asked', async () => {
    const p = panelOn(disk);
    disk.hold = true;
    new FileFollower(disk.manager).follow(p.asPanel);
    disk.file = { ...disk.file, hash: 'h2' };
    await tick();
    p.state.dirty = true;
    disk.held!();
    await vi.advanceTimersByTimeAsync(0);
    expect(p.state.reverts).toBe(0);
  });

  it('asks one question at a time, and never before the notebook is ready', async () => {
    const p = panelOn(disk);
    p.context.isReady = false;
    new FileFollower(disk.manager).follow(p.asPanel);
    await tick();
    expect(disk.gets).toBe(0);
    p.context.isReady = true;
    disk.hold = true;
    await tick();
    await tick();
    await tick();
    expect(disk.gets).toBe(1);  // the first is still unanswered
    disk.hold = false;
    disk.held!();
    await tick();
    expect(disk.gets).toBe(2);
  });

  it('keeps following after the server fails to answer', async () => {
    const p = panelOn(disk);
    disk.failing = true;
    new FileFollower(disk.manager).follow(p.asPanel);
    await tick();
    await tick();
    expect(disk.gets).toBe(2);
    disk.failing = false;
    disk.file = { ...disk.file, hash: 'h2' };
    await tick();
    expect(p.state.reverts).toBe(1);
  });

  it('follows a notebook once however often it is asked, and stops when the notebook closes', async () => {
    const p = panelOn(disk);
    const follower = new FileFollower(disk.manager);
    follower.follow(p.asPanel);
    follower.follow(p.asPanel);
    await tick();
    expect(disk.gets).toBe(1);
    p.dispose();
    await tick();
    await tick();
    expect(disk.gets).toBe(1);
    expect(vi.getTimerCount()).toBe(0);
  });
});
