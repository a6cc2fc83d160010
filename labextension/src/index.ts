/**
 * dsh_notebook in JupyterLab, for the external agents (issue 41): Claude Code, Codex or Cursor
 * drive this page's notebooks through the server's MCP endpoint; this plugin is the page's side.
 * It tells the server which notebooks are open here (`{base_url}dsh/pages`), reads and changes
 * them when an agent asks (the person sees the cell appear), marks the cells external agents
 * wrote, shows a banner above a notebook while an agent's call on it waits for a person, and
 * reloads a notebook an agent changed when its file is put back by `%dsh undo`.
 */
import type { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { IDocumentManager } from '@jupyterlab/docmanager';
import { INotebookTracker, type NotebookPanel } from '@jupyterlab/notebook';

import { type Approval, Banners } from './banner';
import { apply, read, save } from './edits';
import { watchMarks } from './marks';
import { CodedError, type Handlers, PageSocket } from './socket';
import { FileFollower } from './watch';

function activate(app: JupyterFrontEnd, tracker: INotebookTracker, docs: IDocumentManager): void {
  const contents = app.serviceManager.contents;
  const pathOf = (panel: NotebookPanel): string => contents.localPath(panel.context.path);
  const panelOf = (path: string): NotebookPanel => {
    const found = tracker.find(panel => !panel.isDisposed && pathOf(panel) === path);
    if (!found) throw new CodedError('PAGE_GONE', `${String(path)} is no longer open in this JupyterLab page`);
    return found;
  };
  const follower = new FileFollower(contents);
  const pending = new Map<string, Approval>();
  const banners = new Banners((callId, decision) => socket.send({ kind: 'approve', callId, decision }));

  const handlers: Handlers = {
    async ask(message) {
      switch (message.kind) {
        case 'read':
          return read(panelOf(message.path));
        case 'save':
          return save(panelOf(message.path), docs);
        case 'apply': {
          const panel = panelOf(message.path);
          const done = await apply(panel, message.ops);
          follower.follow(panel);
          return done;
        }
      }
    },
    tell(message) {
      if (message.kind === 'approval') {
        pending.set(message.callId, message);
        tracker.forEach(panel => {
          if (pathOf(panel) === message.path) banners.show(panel, message);
        });
      } else {
        pending.delete(message.callId);
        banners.gone(message.callId);
      }
    }
  };
  const socket = new PageSocket(app.serviceManager.serverSettings, handlers);
  const announce = () => socket.setOpen(tracker.filter(p => !p.isDisposed).map(pathOf));

  tracker.widgetAdded.connect((_, panel) => {
    watchMarks(panel);
    panel.context.pathChanged.connect(announce);
    panel.disposed.connect(() => requestAnimationFrame(announce));
    void panel.context.ready.then(() => {
      announce();
      for (const approval of pending.values()) {
        if (approval.path === pathOf(panel)) banners.show(panel, approval);
      }
    });
  });
  announce();
}

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'dsh-notebook-lab:external-agents',
  description: "The page's side of dsh_notebook's external agents: edits into the open notebook, marks, approvals.",
  autoStart: true,
  requires: [INotebookTracker, IDocumentManager],
  activate
};

export default plugin;
