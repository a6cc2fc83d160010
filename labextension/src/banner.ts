/**
 * The banner above a notebook while an external agent's call on it waits for a person (issue 41):
 * who asks (the MCP client's name and version), which tool, the code or cell source it would run
 * or write (masked, as the session's log has it), and Allow / Deny — answered as the loop widget's
 * buttons answer (`session/approve`). It goes when the call is decided, wherever that happened.
 */
import type { NotebookPanel } from '@jupyterlab/notebook';
import { Widget } from '@lumino/widgets';

import type { ApprovalShown } from './pages.gen';

export type Approval = ApprovalShown;

export class Banners {
  /** The banners of each waiting call: one above every open view of its notebook. */
  private shown = new Map<string, Widget[]>();

  constructor(private readonly answer: (callId: string, decision: 'allow' | 'deny') => void) {}

  show(panel: NotebookPanel, approval: Approval): void {
    // a view closed meanwhile took its banner with it: a reopened notebook gets a new one
    const shown = (this.shown.get(approval.callId) ?? []).filter(b => !b.isDisposed);
    if (shown.some(b => b.parent === panel.contentHeader)) return;
    const banner = new Widget();
    banner.addClass('dsh-lab-banner');
    banner.node.setAttribute('role', 'alert');
    const who = [approval.client.name, approval.client.version].filter(Boolean).join(' ') || 'an MCP client';
    const title = document.createElement('div');
    title.className = 'dsh-lab-banner-title';
    title.textContent = `External agent ${who} asks to run ${approval.tool} in this notebook`;
    banner.node.appendChild(title);
    if (approval.text) {
      const code = document.createElement('pre');
      code.className = 'dsh-lab-banner-text';
      code.textContent = approval.text;
      banner.node.appendChild(code);
    }
    const buttons = document.createElement('div');
    buttons.className = 'dsh-lab-banner-buttons';
    for (const decision of ['allow', 'deny'] as const) {
      const button = document.createElement('button');
      button.className = `jp-Button dsh-lab-${decision}`;
      button.textContent = decision === 'allow' ? 'Allow' : 'Deny';
      button.onclick = () => {  // answered: in every view of the notebook
        for (const b of this.shown.get(approval.callId) ?? []) {
          for (const other of Array.from(b.node.querySelectorAll('button'))) other.disabled = true;
        }
        this.answer(approval.callId, decision);
      };
      buttons.appendChild(button);
    }
    banner.node.appendChild(buttons);
    this.shown.set(approval.callId, [...shown, banner]);
    panel.contentHeader.addWidget(banner);
    // the header's box layout sizes its children by their CSS limits: give the banner its own
    // height as its minimum, so the notebook below moves down instead of lying under it
    requestAnimationFrame(() => {
      if (banner.isDisposed) return;
      banner.node.style.minHeight = `${banner.node.scrollHeight}px`;
      panel.contentHeader.fit();
    });
  }

  gone(callId: string): void {
    for (const banner of this.shown.get(callId) ?? []) banner.dispose();
    this.shown.delete(callId);
  }
}
