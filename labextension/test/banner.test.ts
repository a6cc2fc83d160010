import type { NotebookPanel } from '@jupyterlab/notebook';
import { BoxPanel } from '@lumino/widgets';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import { type Approval, Banners } from '../src/banner';

/** A notebook panel as the banners use it: its content header, a real Lumino BoxPanel (as
 * JupyterLab's MainAreaWidget has); closing the notebook disposes it with the banners in it. */
const panel = () => {
  const contentHeader = new BoxPanel();
  return { contentHeader, asPanel: { contentHeader } as unknown as NotebookPanel };
};

const approval = (extra: Partial<Approval> = {}): Approval => ({
  kind: 'approval', callId: 'c1', path: 'a.ipynb', tool: 'execute_code', client: { name: 'codex', version: '0.5' },
  sessionId: 's1', text: 'import os\nos.remove("x")', ...extra
});

const shown = (header: BoxPanel) => header.widgets.filter(w => w.hasClass('dsh-lab-banner') && !w.isDisposed);
const buttons = (header: BoxPanel) => Array.from(header.node.querySelectorAll('button'));

let answers: [string, string][];
let banners: Banners;
beforeEach(() => {
  answers = [];
  banners = new Banners((callId, decision) => answers.push([callId, decision]));
  vi.useFakeTimers({ toFake: ['requestAnimationFrame'] });
});
afterEach(() => { vi.useRealTimers(); });

describe('the approval banner', () => {
  it('says who asks to run what, shows the text, and offers Allow and Deny', () => {
    const p = panel();
    banners.show(p.asPanel, approval());
    const [banner] = shown(p.contentHeader);
    expect(banner.node.getAttribute('role')).toBe('alert');
    expect(banner.node.querySelector('.dsh-lab-banner-title')!.textContent).toBe(
      'External agent codex 0.5 asks to run execute_code in this notebook');
    expect(banner.node.querySelector('pre')!.textContent).toBe('import os\nos.remove("x")');
    expect(buttons(p.contentHeader).map(b => b.textContent)).toEqual(['Allow', 'Deny']);
    vi.advanceTimersToNextFrame();  // its own height as its minimum, once drawn
    expect(banner.node.style.minHeight).toMatch(/^\d+px$/);
  });

  it('names the client without a version, an unnamed one as an MCP client, and shows no empty text', () => {
    const p = panel();
    banners.show(p.asPanel, approval({ callId: 'c2', client: { name: 'cursor' }, text: null, tool: 'insert_cell' }));
    banners.show(p.asPanel, approval({ callId: 'c3', client: { name: '' }, text: '' }));
    const titles = shown(p.contentHeader).map(b => b.node.querySelector('.dsh-lab-banner-title')!.textContent);
    expect(titles).toEqual([
      'External agent cursor asks to run insert_cell in this notebook',
      'External agent an MCP client asks to run execute_code in this notebook'
    ]);
    expect(p.contentHeader.node.querySelectorAll('pre')).toHaveLength(0);
  });

  it('is shown once per call, however often the server says so', () => {
    const p = panel();
    banners.show(p.asPanel, approval());
    banners.show(p.asPanel, approval());
    expect(shown(p.contentHeader)).toHaveLength(1);
  });

  it('answers once: a press sends the decision and disables both buttons', () => {
    const p = panel();
    banners.show(p.asPanel, approval());
    const [allow, deny] = buttons(p.contentHeader);
    deny.click();
    expect(answers).toEqual([['c1', 'deny']]);
    expect([allow.disabled, deny.disabled]).toEqual([true, true]);
    allow.click();  // disabled: no second answer
    expect(answers).toEqual([['c1', 'deny']]);
  });

  it('goes when the call is decided, and a call never shown is no error', () => {
    const p = panel();
    banners.show(p.asPanel, approval());
    banners.show(p.asPanel, approval({ callId: 'c2' }));
    banners.gone('c1');
    banners.gone('never-shown');
    expect(shown(p.contentHeader)).toHaveLength(1);
    expect(p.contentHeader.node.querySelectorAll('.dsh-lab-banner')).toHaveLength(1);
    vi.advanceTimersToNextFrame();  // the gone banner's pending sizing finds it disposed
  });

  it('shows above every open view of the notebook, and goes from all of them', () => {
    const first = panel();
    const second = panel();
    banners.show(first.asPanel, approval());
    banners.show(second.asPanel, approval());
    expect(shown(first.contentHeader)).toHaveLength(1);
    expect(shown(second.contentHeader)).toHaveLength(1);
    buttons(second.contentHeader)[0].click();
    expect(answers).toEqual([['c1', 'allow']]);
    expect(buttons(first.contentHeader).every(b => b.disabled)).toBe(true);  // answered: in every view
    banners.gone('c1');
    expect(shown(first.contentHeader)).toHaveLength(0);
    expect(shown(second.contentHeader)).toHaveLength(0);
  });

  it('shows again on the notebook reopened while the call still waits', () => {
    const closed = panel();
    banners.show(closed.asPanel, approval());
    closed.contentHeader.dispose();  // the person closes the notebook: its banner goes with it
    const reopened = panel();
    banners.show(reopened.asPanel, approval());
    expect(shown(reopened.contentHeader)).toHaveLength(1);
  });
});
