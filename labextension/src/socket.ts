/**
 * The page's WebSocket to `{base_url}dsh/pages` (issue 41): Jupyter Server authenticates it as it
 * does every request of the page. The page says which notebooks it has open; the server asks it
 * to read, save or change one of them, and tells it which external calls wait for a person.
 * Reconnects with a growing pause while the page lives.
 */
import { URLExt } from '@jupyterlab/coreutils';
import type { ServerConnection } from '@jupyterlab/services';

/** A message of the server. */
export interface ServerMessage {
  kind: 'read' | 'save' | 'apply' | 'approval' | 'approval-gone';
  id?: number;
  path?: string;
  [key: string]: unknown;
}

/** A refusal the external agent reads: `[CODE] message`. */
export class CodedError extends Error {
  constructor(readonly code: string, message: string) {
    super(message);
  }
}

export type Handler = (message: ServerMessage) => Promise<unknown> | void;

export class PageSocket {
  private socket: WebSocket | null = null;
  private pause = 1000;
  private disposed = false;
  private openPaths: string[] = [];

  constructor(private readonly settings: ServerConnection.ISettings, private readonly handle: Handler) {
    this.connect();
  }

  /** The notebooks this page has open (sent now and after each reconnect). */
  setOpen(paths: string[]): void {
    this.openPaths = [...new Set(paths)].sort();
    this.send({ kind: 'open', paths: this.openPaths });
  }

  send(message: Record<string, unknown>): void {
    if (this.socket?.readyState === WebSocket.OPEN) {
      this.socket.send(JSON.stringify(message));
    }
  }

  dispose(): void {
    this.disposed = true;
    this.socket?.close();
  }

  private connect(): void {
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
        window.setTimeout(() => this.connect(), this.pause);
        this.pause = Math.min(this.pause * 2, 30000);
      }
    };
  }

  private async dispatch(text: string): Promise<void> {
    let message: ServerMessage;
    try {
      message = JSON.parse(text) as ServerMessage;
    } catch {
      return;
    }
    if (typeof message.id !== 'number') {
      void this.handle(message);
      return;
    }
    try {
      const value = await this.handle(message);
      this.send({ kind: 'reply', id: message.id, ok: true, value: value ?? {} });
    } catch (err) {
      const coded = err instanceof CodedError ? err : new CodedError('INTERNAL', String(err));
      this.send({ kind: 'reply', id: message.id, ok: false, error: { code: coded.code, message: coded.message } });
    }
  }
}
