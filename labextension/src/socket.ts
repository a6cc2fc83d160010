/**
 * The page's WebSocket to `{base_url}dsh/pages` (issue 41): Jupyter Server authenticates it as it
 * does every request of the page. The page says which notebooks it has open; the server asks it
 * to read, save or change one of them, and tells it which external calls wait for a person.
 * Reconnects with a growing pause while the page lives. The messages are the wire's
 * (`pages.gen.ts`, generated from `dsh_notebook/wire/external_pages.py`).
 */
import { URLExt } from '@jupyterlab/coreutils';
import type { ServerConnection } from '@jupyterlab/services';

import type { PageApply, PageFromServer, PageNotebook, PageRead, PageSave, PageSaved, PageToServer } from './pages.gen';

/** An ask of the server: the page answers it with a reply of the same id. */
export type PageAsk = PageRead | PageSave | PageApply;
/** What an ask is answered with. */
export type PageValue = PageNotebook | PageSaved;

/** A refusal the external agent reads: `[CODE] message`. */
export class CodedError extends Error {
  constructor(readonly code: string, message: string) {
    super(message);
  }
}

export interface Handlers {
  /** Answer an ask (a thrown {@link CodedError} is the refusal the external agent reads). */
  ask(message: PageAsk): Promise<PageValue>;
  /** A message nobody waits for an answer to: an approval banner, or its end. */
  tell(message: Exclude<PageFromServer, PageAsk>): void;
}

/** The kinds the server sends (a kind added to the wire fails type checking until it is here). */
const KINDS: Record<PageFromServer['kind'], true> = { read: true, save: true, apply: true, approval: true, 'approval-gone': true };

/** A message of the wire, by its shape: anything else (a proxy's page, a newer server's kind) is ignored. */
function isMessage(value: unknown): value is PageFromServer {
  const kind = typeof value === 'object' && value !== null ? (value as { kind?: unknown }).kind : undefined;
  return typeof kind === 'string' && Object.prototype.hasOwnProperty.call(KINDS, kind);
}

const isAsk = (message: PageFromServer): message is PageAsk =>
  message.kind === 'read' || message.kind === 'save' || message.kind === 'apply';

export class PageSocket {
  private socket: WebSocket | null = null;
  private pause = 1000;
  private disposed = false;
  private openPaths: string[] = [];
  private reconnect: number | undefined;

  constructor(private readonly settings: ServerConnection.ISettings, private readonly handlers: Handlers) {
    this.connect();
  }

  /** The notebooks this page has open (sent now and after each reconnect). */
  setOpen(paths: string[]): void {
    this.openPaths = [...new Set(paths)].sort();
    this.send({ kind: 'open', paths: this.openPaths });
  }

  send(message: PageToServer): void {
    if (this.socket?.readyState === WebSocket.OPEN) {
      this.socket.send(JSON.stringify(message));
    }
  }

  dispose(): void {
    this.disposed = true;
    window.clearTimeout(this.reconnect);
    this.socket?.close();
  }

  private connect(): void {
    if (this.disposed) return;
    let url = URLExt.join(this.settings.wsUrl, 'dsh/pages');
    if (this.settings.appendToken && this.settings.token) {
      url += `?token=${encodeURIComponent(this.settings.token)}`;
    }
    const socket = new this.settings.WebSocket(url);
    this.socket = socket;
    socket.onopen = () => {
      this.pause = 1000;
      this.send({ kind: 'open', paths: this.openPaths });
    };
    socket.onmessage = event => void this.dispatch(String(event.data));
    socket.onclose = () => {
      if (this.socket === socket) this.socket = null;
      if (!this.disposed) {
        this.reconnect = window.setTimeout(() => this.connect(), this.pause);
        this.pause = Math.min(this.pause * 2, 30000);
      }
    };
  }

  private async dispatch(text: string): Promise<void> {
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch {
      return;
    }
    if (!isMessage(message)) return;
    if (!isAsk(message)) {
      this.handlers.tell(message);
      return;
    }
    try {
      const value = await this.handlers.ask(message);
      this.send({ kind: 'reply', id: message.id, ok: true, value });
    } catch (err) {
      const coded = err instanceof CodedError ? err : new CodedError('INTERNAL', String(err));
      this.send({ kind: 'reply', id: message.id, ok: false, error: { code: coded.code, message: coded.message } });
    }
  }
}
