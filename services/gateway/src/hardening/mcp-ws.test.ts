/**
 * Property tests of MCP over WebSocket (/mcp/ws, sub-protocol mcp): text that is no JSON, binary
 * frames, JSON-RPC messages and batches with members of wrong types, unicode, deep nesting, id
 * floods. Every frame gets the answers the model says (rpc-model.ts) on the same socket, which
 * keeps answering; a frame over the size limit or invalid UTF-8 closes the socket with the proper
 * close code, and the server keeps answering new sockets and /health.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import WebSocket from 'ws';
import { expectedInBatch, isRecord, mcpElement, validId } from './rpc-model';
import { SEED, expectHealthy, startWorld } from './world';
import type { World } from './world';

/** A small limit, so that over-limit frames are cheap to send. */
const MAX_BYTES = 256 * 1024;

let world: World;
let url: string;
beforeAll(async () => {
  world = await startWorld({ mcp: { maxMessageBytes: MAX_BYTES } }, true);
  url = `${world.base.replace(/^http/, 'ws')}/mcp/ws`;
});
afterAll(async () => {
  await world?.stop();
});
afterEach(async () => {
  await expectHealthy(world.app);
});

interface Answer {
  jsonrpc?: unknown;
  id?: unknown;
  method?: unknown;
  result?: unknown;
  error?: { code?: unknown; message?: unknown };
}

/** A socket that records every frame it receives, each checked to be one JSON-RPC object. */
class Peer {
  readonly answers: Answer[] = [];
  closed: { code: number; reason: string } | undefined;
  private waiters: (() => void)[] = [];
  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data, isBinary) => {
      expect(isBinary, 'the server sends text frames').toBe(false);
      const text = Buffer.isBuffer(data) ? data.toString('utf8') : String(data);
      const answer = JSON.parse(text) as Answer;
      expect(isRecord(answer), text.slice(0, 200)).toBe(true);
      expect(answer.jsonrpc).toBe('2.0');
      this.answers.push(answer);
      this.wake();
    });
    ws.on('close', (code, reason) => {
      this.closed = { code, reason: reason.toString() };
      this.wake();
    });
  }

  static async open(): Promise<Peer> {
    const ws = new WebSocket(url, 'mcp');
    const peer = new Peer(ws);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    return peer;
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  /** Waits until `done()` holds; 10 s is far above the few ms this takes, even on a busy machine. */
  async until(done: () => boolean, what: string, ms = 10_000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!done()) {
      if (Date.now() > deadline)
        throw new Error(`${what}: timed out; got ${JSON.stringify(this.answers).slice(-600)}`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 200);
      });
    }
  }

  answerTo(id: unknown): Answer | undefined {
    return this.answers.find((a) => a.id === id && a.method === undefined);
  }

  /** A ping answered on this socket: it still works. */
  async ping(id: string): Promise<void> {
    this.ws.send(JSON.stringify({ jsonrpc: '2.0', id, method: 'ping' }));
    await this.until(() => this.answerTo(id) !== undefined, `ping ${id}`);
    expect(this.answerTo(id)).toEqual({ jsonrpc: '2.0', id, result: {} });
  }

  close(): void {
    this.ws.terminate();
  }
}

type Frame =
  { kind: 'text'; text: string } | { kind: 'json'; value: unknown } | { kind: 'binary'; bytes: Uint8Array };

const frame: fc.Arbitrary<Frame> = fc.oneof(
  {
    weight: 1,
    arbitrary: fc.string({ unit: 'binary', maxLength: 40 }).map((text) => ({ kind: 'text', text }) as const),
  },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom('', ' ', '{', '[1,', 'null', '"x"', '{"jsonrpc":"2.0","id":1,"method":')
      .map((text) => ({ kind: 'text', text }) as const),
  },
  { weight: 4, arbitrary: mcpElement.map((value) => ({ kind: 'json', value }) as const) },
  {
    weight: 2,
    arbitrary: fc.array(mcpElement, { maxLength: 6 }).map((value) => ({ kind: 'json', value }) as const),
  },
  {
    weight: 1,
    arbitrary: fc.uint8Array({ maxLength: 64 }).map((bytes) => ({ kind: 'binary', bytes }) as const),
  },
);

/** The text the server reads: what the client's UTF-8 encoding makes of the string (lone surrogates → U+FFFD). */
const onTheWire = (text: string): string => Buffer.from(text, 'utf8').toString('utf8');

/** What a frame gets: errors ({code, id}) and requests the server answers (their ids). */
function expectedOf(f: Frame): { errors: { code: number; id: unknown }[]; served: unknown[] } {
  if (f.kind === 'binary') return { errors: [{ code: -32600, id: null }], served: [] };
  let value: unknown;
  try {
    value = JSON.parse(f.kind === 'text' ? onTheWire(f.text) : JSON.stringify(f.value));
  } catch {
    return { errors: [{ code: -32700, id: null }], served: [] };
  }
  const batch = Array.isArray(value) ? value : [value];
  if (batch.length === 0) return { errors: [{ code: -32600, id: null }], served: [] };
  const errors: { code: number; id: unknown }[] = [];
  const served: unknown[] = [];
  for (const e of batch) {
    const want = expectedInBatch(e);
    if (want === 'server') served.push((e as { id: unknown }).id);
    else if (want !== 'none') errors.push(want);
  }
  return { errors, served };
}

/** The ids of every request a frame holds, valid or not, for the uniqueness precondition. */
function idsOf(f: Frame): unknown[] {
  if (f.kind !== 'json') return [];
  return (Array.isArray(f.value) ? f.value : [f.value])
    .filter(isRecord)
    .map((e) => e.id)
    .filter(validId);
}

const send = (peer: Peer, f: Frame): void => {
  if (f.kind === 'binary') peer.ws.send(Buffer.from(f.bytes), { binary: true });
  else peer.ws.send(f.kind === 'text' ? f.text : JSON.stringify(f.value));
};

const sortedCodes = (list: { id?: unknown; error?: { code?: unknown } | undefined; code?: unknown }[]) =>
  list.map((a) => a.code ?? a.error?.code).sort();

let probes = 0;

describe('MCP over WebSocket: arbitrary frames', () => {
  it('every frame gets the answers of the model, on a socket that keeps answering', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(frame, { minLength: 1, maxLength: 5 }), async (frames) => {
        // Ids unique on the socket, so that an answer tells its request.
        const ids = frames.flatMap(idsOf);
        fc.pre(new Set(ids).size === ids.length);
        const peer = await Peer.open();
        try {
          for (const f of frames) send(peer, f);
          const want = frames.map(expectedOf);
          const errors = want.flatMap((w) => w.errors);
          const served = want.flatMap((w) => w.served);
          const probe = `probe-${++probes}`;
          await peer.ping(probe);
          await peer.until(
            () =>
              served.every((id) => peer.answerTo(id)) &&
              peer.answers.filter((a) => a.method === undefined).length >= errors.length + served.length + 1,
            JSON.stringify(frames).slice(0, 300),
          );
          expect(peer.closed).toBeUndefined();
          const answers = peer.answers.filter((a) => a.method === undefined && a.id !== probe);
          expect(answers).toHaveLength(errors.length + served.length);
          for (const a of answers) {
            expect('result' in a !== 'error' in a).toBe(true);
            if (a.error) expect(typeof a.error.message).toBe('string');
          }
          // errors that echo an id: that id's code; errors without one: the multiset of codes
          for (const e of errors.filter((x) => x.id !== null))
            expect(peer.answerTo(e.id)?.error?.code, JSON.stringify(e)).toBe(e.code);
          expect(sortedCodes(answers.filter((a) => a.id === null))).toEqual(
            sortedCodes(errors.filter((x) => x.id === null)),
          );
        } finally {
          peer.close();
        }
      }),
      { seed: SEED, numRuns: 80 },
    );
  });
});

describe('MCP over WebSocket: hostile frames', () => {
  it('deep nesting: a 40 000-deep frame is an Invalid Request before it is parsed; params under the limit reach the method', async () => {
    const peer = await Peer.open();
    // as deep as the frame limit allows (5 bytes a level for objects); body-limits.ts refuses past 64
    const depth = 40_000;
    const deep = (n: number): string => `{"x":${'{"a":'.repeat(n)}1${'}'.repeat(n)}}`;
    peer.ws.send('['.repeat(depth) + ']'.repeat(depth));
    peer.ws.send(`{"jsonrpc":"2.0","id":"deep","method":"ping","params":${deep(depth)}}`);
    peer.ws.send(`{"jsonrpc":"2.0","id":"shallow","method":"ping","params":${deep(60)}}`);
    const args = `${'['.repeat(55)}${']'.repeat(55)}`;
    peer.ws.send(
      `{"jsonrpc":"2.0","id":"deep-call","method":"tools/call","params":{"name":"who","arguments":{"query":${args}}}}`,
    );
    await peer.until(() => peer.answers.length >= 4, 'deep frames');
    const refusals = peer.answers.filter((a) => a.id === null);
    expect(refusals).toHaveLength(2);
    for (const r of refusals) expect(r.error?.code).toBe(-32600);
    expect(peer.answerTo('deep')).toBeUndefined();
    expect(peer.answerTo('shallow')).toEqual({ jsonrpc: '2.0', id: 'shallow', result: {} });
    expect(peer.answerTo('deep-call')?.error?.code).toBe(-32602);
    await peer.ping('after-deep');
    peer.close();
  });

  it('a frame over the size limit closes with 1009; the server keeps answering', async () => {
    const peer = await Peer.open();
    peer.ws.send(
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(MAX_BYTES) } }),
    );
    await peer.until(() => peer.closed !== undefined, 'close after an over-limit frame');
    expect(peer.closed?.code).toBe(1009);
    const next = await Peer.open();
    await next.ping('after-huge');
    next.close();
  });

  it('a frame just under the limit is answered', async () => {
    const peer = await Peer.open();
    const pad = 'é'.repeat((MAX_BYTES - 200) / 2);
    peer.ws.send(JSON.stringify({ jsonrpc: '2.0', id: 'big', method: 'ping', params: { pad } }));
    await peer.until(() => peer.answerTo('big') !== undefined, 'a big frame');
    expect(peer.answerTo('big')?.result).toEqual({});
    peer.close();
  });

  it('a text frame of invalid UTF-8 closes with 1007; the server keeps answering', async () => {
    const peer = await Peer.open();
    peer.ws.send(Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), { binary: false });
    await peer.until(() => peer.closed !== undefined, 'close after invalid UTF-8');
    expect(peer.closed?.code).toBe(1007);
    const next = await Peer.open();
    await next.ping('after-utf8');
    next.close();
  });

  it('id floods: 20 frames of 100 requests are all answered; 101 in one frame are refused', async () => {
    const peer = await Peer.open();
    for (let f = 0; f < 20; f++)
      peer.ws.send(
        JSON.stringify(
          Array.from({ length: 100 }, (_, i) => ({ jsonrpc: '2.0', id: f * 100 + i, method: 'ping' })),
        ),
      );
    await peer.until(() => peer.answers.length >= 2_000, '2 000 pings');
    expect(new Set(peer.answers.map((a) => a.id)).size).toBe(2_000);
    expect(peer.answers.every((a) => a.result !== undefined)).toBe(true);
    peer.ws.send(
      JSON.stringify(
        Array.from({ length: 101 }, (_, i) => ({ jsonrpc: '2.0', id: `x${i}`, method: 'ping' })),
      ),
    );
    await peer.until(() => peer.answers.length >= 2_001, 'the refusal');
    expect(peer.answers[2_000]).toMatchObject({ id: null, error: { code: -32600 } });
    await peer.ping('after-flood');
    peer.close();
  });

  it('unicode ids and methods come back exactly', async () => {
    const peer = await Peer.open();
    const ids = ['🦄', 'e\u0301', '\u202Eabc', '\u0000', '\uFEFF', '日本語', 'a'.repeat(10_000)];
    for (const id of ids) peer.ws.send(JSON.stringify({ jsonrpc: '2.0', id, method: 'ping' }));
    peer.ws.send(JSON.stringify({ jsonrpc: '2.0', id: 'm', method: 'tools/💥' }));
    await peer.until(() => peer.answers.length >= ids.length + 1, 'unicode');
    for (const id of ids) expect(peer.answerTo(id)).toEqual({ jsonrpc: '2.0', id, result: {} });
    expect(peer.answerTo('m')?.error?.code).toBe(-32601);
    peer.close();
  });
});
