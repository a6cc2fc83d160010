/**
 * A notebook an external agent changed follows its file afterwards (issue 41): when the file
 * changes on disk — `%dsh undo` put back what the agent's turn did — and the person has nothing
 * unsaved in the open notebook, it is reloaded from disk, so the undone cell goes from the page
 * too. (With unsaved changes, JupyterLab's own "file changed on disk" question stays the person's.)
 */
import type { NotebookPanel } from '@jupyterlab/notebook';
import type { Contents } from '@jupyterlab/services';

const EVERY_MS = 1500;

export class FileFollower {
  private timers = new Map<NotebookPanel, number>();

  constructor(private readonly contents: Contents.IManager) {}

  follow(panel: NotebookPanel): void {
    if (this.timers.has(panel)) return;
    let busy = false;
    const timer = window.setInterval(async () => {
      const context = panel.context;
      if (busy || panel.isDisposed || context.model.dirty || !context.isReady) return;
      busy = true;
      try {
        const known = context.contentsModel;
        const disk = await this.contents.get(context.path, { content: false, hash: true });
        const changed = known?.hash && disk.hash ? disk.hash !== known.hash : disk.last_modified !== known?.last_modified;
        if (changed && !context.model.dirty && !panel.isDisposed) await context.revert();
      } catch {
        // gone or unreadable: JupyterLab says so itself when the person saves
      } finally {
        busy = false;
      }
    }, EVERY_MS);
    this.timers.set(panel, timer);
    panel.disposed.connect(() => {
      window.clearInterval(timer);
      this.timers.delete(panel);
    });
  }
}
