import type { ServerConnection } from '@jupyterlab/services';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import type { PageFromServer, PageToServer } from '../src/pages.gen';
import { CodedError, type Handlers, type PageAsk, PageSocket, type PageValue } from '../src/socket';

/** The boundary: a WebSocket class as the server settings give it. The test opens, closes and
 * writes to it as the server would; what the page sends is kept, and can be waited for. */
class FakeSocket {
  static readonly CONNECTING = 0;
  static readonly OPEN = 1;
  static readonly CLOSING = 2;
  static readonly CLOSED = 3;
  static made: FakeSocket[] = [];

  readyState = FakeSocket.CONNECTING;
  sent: PageToServer[] = [];
  onopen: (() => void) | null = null;
  onmessage: ((event: { data: unknown }) => void) | null = null;
  onclose: (() => void) | null = null;
  private waiters: ((m: PageToServer) => void)[] = [];

  constructor(readonly url: string) {
    FakeSocket.made.push(this);
  }

  send(text: string): void {
    expect(this.readyState).toBe(FakeSocket.OPEN);
    const message = JSON.parse(text) as PageToServer;
    this.sent.push(message);
    this.waiters.shift()?.(message);
  }

  close(): void {
    if (this.readyState === FakeSocket.CLOSED) return;
    this.readyState = FakeSocket.CLOSED;
    this.onclose?.();
  }

  // the server's side
  accept(): void {
    this.readyState = FakeSocket.OPEN;
    this.onopen?.();
  }

  deliver(message: PageFromServer | string): void {
    this.onmessage?.({ data: typeof message === 'string' ? message : JSON.stringify(message) });
  }

  /** The next message the page sends. */
  next(): Promise<PageToServer> {
    return new Promise(resolve => this.waiters.push(resolve));
  }
}

const settings = (extra: Partial<ServerConnection.ISettings> = {}): ServerConnection.ISettings =>
  ({ wsUrl: 'ws://lab.example:8888/user/ana/', appendToken: false, token: '', WebSocket: FakeSocket, ...extra }) as
  unknown as ServerConnection.ISettings;

/** Handlers that answer asks with `answer` and keep what they were told. */
function handlers(answer: (m: PageAsk) => Promise<PageValue> = async () => ({ saved: true, dirty: false })) {
  const told: unknown[] = [];
  const asked: PageAsk[] = [];
  const h: Handlers = {
    ask: m => {
      asked.push(m);
      return answer(m);
    },
    tell: m => { told.push(m); }
  };
  return { h, told, asked };
}

const last = (): FakeSocket => FakeSocket.made[FakeSocket.made.length - 1];
let sockets: PageSocket[] = [];
const open = (s: ServerConnection.ISettings, h: Handlers): PageSocket => {
  const socket = new PageSocket(s, h);
  sockets.push(socket);
  return socket;
};

beforeEach(() => {
  FakeSocket.made = [];
  vi.useFakeTimers();
});
afterEach(() => {
  for (const s of sockets) s.dispose();
  sockets = [];
  vi.useRealTimers();
});

describe('connecting', () => {
  it('connects to {base_url}dsh/pages, with the token only when the settings append it', () => {
    open(settings({ token: 'sec ret' }), handlers().h);
    expect(last().url).toBe('ws://lab.example:8888/user/ana/dsh/pages');
    open(settings({ token: 'sec ret', appendToken: true }), handlers().h);
    expect(last().url).toBe('ws://lab.example:8888/user/ana/dsh/pages?token=sec%20ret');
    open(settings({ token: '', appendToken: true }), handlers().h);
    expect(last().url).toBe('ws://lab.example:8888/user/ana/dsh/pages');
  });

  it('says which notebooks are open, sorted and each once, on open and after each reconnect', () => {
    const page = open(settings(), handlers().h);
    page.setOpen(['b.ipynb', 'a.ipynb', 'b.ipynb']);  // not open yet: kept for the open
    const first = last();
    expect(first.sent).toEqual([]);
    first.accept();
    expect(first.sent).toEqual([{ kind: 'open', paths: ['a.ipynb', 'b.ipynb'] }]);
    page.setOpen(['c.ipynb', 'a.ipynb']);
    expect(first.sent[1]).toEqual({ kind: 'open', paths: ['a.ipynb', 'c.ipynb'] });

    first.close();
    vi.advanceTimersByTime(1000);
    const second = last();
    expect(second).not.toBe(first);
    second.accept();
    expect(second.sent).toEqual([{ kind: 'open', paths: ['a.ipynb', 'c.ipynb'] }]);
  });
});

describe('reconnecting', () => {
  it('waits 1 s, then twice as long each time up to 30 s, and 1 s again once a socket opened', () => {
    open(settings(), handlers().h);
    const waits = [1000, 2000, 4000, 8000, 16000, 30000, 30000];
    for (const wait of waits) {
      const count = FakeSocket.made.length;
      last().close();
      vi.advanceTimersByTime(wait - 1);
      expect(FakeSocket.made).toHaveLength(count);
      vi.advanceTimersByTime(1);
      expect(FakeSocket.made).toHaveLength(count + 1);
    }
    last().accept();
    const count = FakeSocket.made.length;
    last().close();
    vi.advanceTimersByTime(1000);
    expect(FakeSocket.made).toHaveLength(count + 1);
  });

  it('stops for good once disposed: its socket is closed and none is opened again', () => {
    const page = open(settings(), handlers().h);
    last().accept();
    page.dispose();
    expect(last().readyState).toBe(FakeSocket.CLOSED);
    vi.advanceTimersByTime(120_000);
    expect(FakeSocket.made).toHaveLength(1);
  });

  it('opens no socket after a dispose that came while it waited to reconnect', () => {
    const page = open(settings(), handlers().h);
    last().close();  // the server went away: a reconnect is due in 1 s
    page.dispose();  // the page closes meanwhile
    vi.advanceTimersByTime(120_000);
    expect(FakeSocket.made).toHaveLength(1);
  });
});

describe('asks and tells', () => {
  const read: PageAsk = { kind: 'read', id: 7, path: 'a.ipynb' };

  it('answers an ask with a reply of its id and the value', async () => {
    const value: PageValue = { notebook: { cells: [] }, dirty: true };
    const { h, asked } = handlers(async () => value);
    open(settings(), h);
    last().accept();
    for (const ask of [read, { kind: 'save', id: 8, path: 'a.ipynb' }, { kind: 'apply', id: 9, path: 'a.ipynb', ops: [] }] as PageAsk[]) {
      const reply = last().next();
      last().deliver(ask);
      expect(await reply).toEqual({ kind: 'reply', id: ask.id, ok: true, value });
    }
    expect(asked.map(a => a.kind)).toEqual(['read', 'save', 'apply']);
  });

  it('answers a refusal with its code and message', async () => {
    open(settings(), handlers(async () => { throw new CodedError('EDIT_CONFLICT', 'cell b was changed'); }).h);
    last().accept();
    const reply = last().next();
    last().deliver({ kind: 'apply', id: 3, path: 'a.ipynb', ops: [] });
    expect(await reply).toEqual({ kind: 'reply', id: 3, ok: false, error: { code: 'EDIT_CONFLICT', message: 'cell b was changed' } });
  });

  it('answers any other failure as INTERNAL', async () => {
    open(settings(), handlers(async () => { throw new TypeError('x is undefined'); }).h);
    last().accept();
    const reply = last().next();
    last().deliver(read);
    expect(await reply).toEqual({ kind: 'reply', id: 7, ok: false, error: { code: 'INTERNAL', message: 'TypeError: x is undefined' } });
  });

  it('tells what is not an ask, and sends nothing back', async () => {
    const { h, told, asked } = handlers();
    open(settings(), h);
    last().accept();
    const shown: PageFromServer = {
      kind: 'approval', callId: 'c1', path: 'a.ipynb', tool: 'execute_code', client: { name: 'codex' }, sessionId: 's', text: 'rm -rf'
    };
    last().deliver(shown);
    last().deliver({ kind: 'approval-gone', callId: 'c1' });
    expect(told).toEqual([shown, { kind: 'approval-gone', callId: 'c1' }]);
    expect(asked).toEqual([]);
    expect(last().sent).toEqual([{ kind: 'open', paths: [] }]);
  });

  it('ignores what is not a message of the wire, and keeps serving', async () => {
    const { h, told, asked } = handlers();
    open(settings(), h);
    last().accept();
    for (const junk of ['not json {', 'null', '42', '"read"', '[]', '{}', '{"kind":"mystery","id":1}']) last().deliver(junk);
    await Promise.resolve();
    expect(told).toEqual([]);
    expect(asked).toEqual([]);
    const reply = last().next();
    last().deliver(read);
    expect(await reply).toMatchObject({ kind: 'reply', id: 7, ok: true });
  });

  it('drops the reply to an ask whose socket closed before the answer', async () => {
    let answer!: (v: PageValue) => void;
    open(settings(), handlers(() => new Promise(resolve => { answer = resolve; })).h);
    const first = last();
    first.accept();
    first.deliver(read);
    first.close();
    answer({ saved: false, dirty: false });
    await Promise.resolve();
    await Promise.resolve();
    expect(first.sent).toEqual([{ kind: 'open', paths: [] }]);
  });
});
