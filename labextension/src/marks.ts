/**
 * The cells an external agent wrote, marked (issue 41): a cell whose metadata carries
 * `dsh.provenance` (client, call id, session, tool, time) gets a line above it in the external
 * agent's colour — "insert_cell by external agent claude-code 2.1.0 · call x1a2…" — and a bar on
 * its side, kept in step with the metadata.
 */
import type { Cell } from '@jupyterlab/cells';
import type { NotebookPanel } from '@jupyterlab/notebook';

import type { CellProvenance } from './pages.gen';

/** What a cell's `metadata.dsh.provenance` says (read defensively: the metadata may be edited). */
type Provenance = Partial<CellProvenance>;

export function provenanceOf(cell: Cell): Provenance | null {
  const dsh = cell.model.getMetadata('dsh') as { provenance?: Provenance } | undefined;
  const prov = dsh?.provenance;
  return prov && typeof prov === 'object' && !Array.isArray(prov) ? prov : null;
}

/** A field of the provenance if it is text (hand-edited metadata may hold anything). */
const text = (value: unknown): string | undefined => (typeof value === 'string' && value ? value : undefined);

export function describe(prov: Provenance): string {
  const client: Partial<CellProvenance['client']> = prov.client && typeof prov.client === 'object' ? prov.client : {};
  const who = [text(client.name), text(client.version)].filter(Boolean).join(' ') || 'an MCP client';
  return `${text(prov.tool) ?? 'written'} by external agent ${who} · call ${text(prov.callId) ?? '?'}`;
}

function markCell(cell: Cell): void {
  const prov = provenanceOf(cell);
  let badge = cell.node.querySelector<HTMLElement>(':scope > .dsh-provenance');
  if (!prov) {
    cell.removeClass('dsh-external-cell');
    badge?.remove();
    return;
  }
  cell.addClass('dsh-external-cell');
  if (!badge) {
    badge = document.createElement('div');
    badge.className = 'dsh-provenance';
    cell.node.insertBefore(badge, cell.node.firstChild);
  }
  const line = describe(prov);
  if (badge.textContent !== line) badge.textContent = line;
  badge.title = `session ${text(prov.sessionId) ?? '?'} · ${text(prov.time) ?? ''} (metadata.dsh.provenance)`;
}

/** Keep the marks of `panel`'s cells in step with their metadata. */
export function watchMarks(panel: NotebookPanel): void {
  let queued = false;
  const followed = new WeakSet<object>();
  const run = () => {
    queued = false;
    if (panel.isDisposed) return;
    for (const cell of panel.content.widgets) {
      if (!followed.has(cell.model)) {  // a cell's own metadata changes (edit_cell's provenance)
        followed.add(cell.model);
        cell.model.metadataChanged.connect(schedule);
      }
      markCell(cell);
    }
  };
  function schedule(): void {
    if (!queued) {
      queued = true;
      requestAnimationFrame(run);
    }
  }
  const attach = () => {
    const model = panel.content.model;
    if (!model) return;
    model.contentChanged.connect(schedule);
    model.cells.changed.connect(schedule);
    model.metadataChanged.connect(schedule);
    schedule();
  };
  panel.content.modelChanged.connect(attach);
  void panel.context.ready.then(attach);
}
