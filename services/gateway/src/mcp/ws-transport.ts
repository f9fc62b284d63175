/**
 * An MCP Transport over one WebSocket: each text frame is one JSON-RPC message (or a batch).
 * Requests are multiplexed by their JSON-RPC id; the SDK's Protocol pairs answers with them.
 */
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import WebSocket from 'ws';
import type { RawData } from 'ws';
import { MAX_BATCH, checkMessage } from './envelope';
import type { CheckOptions } from './envelope';
import { BODY_LIMITS, JsonTooDeepError } from '../body-limits';
import { jsonNestingExceeds } from '../json-nesting';

/** The JSON-RPC error a peer gets for a frame that is no message at all. */
function errorFrame(code: number, message: string, id: string | number | null = null): string {
  return JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } });
}

export class WebSocketServerTransport implements Transport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: (<T extends JSONRPCMessage>(message: T) => void) | undefined;
  sessionId?: string | undefined;
  private started = false;
  private closed = false;

  /** `envelope.handles`: the server's request methods (-32601 against -32602 for bad params). */
  constructor(
    private readonly socket: WebSocket,
    private readonly envelope: CheckOptions = { handles: () => true },
    /** Frames nesting deeper are refused before JSON.parse (body-limits.ts). */
    private readonly maxJsonDepth: number = BODY_LIMITS.jsonDepth,
  ) {}

  async start(): Promise<void> {
    if (this.started) throw new Error('WebSocketServerTransport already started');
    this.started = true;
    this.socket.on('message', (data, isBinary) => this.receive(data, isBinary));
    this.socket.on('error', (err) => this.onerror?.(err));
    this.socket.on('close', () => this.finish());
    if (this.socket.readyState >= WebSocket.CLOSING) this.finish();
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    this.onclose?.();
  }

  private reply(frame: string): void {
    if (this.socket.readyState === WebSocket.OPEN) this.socket.send(frame);
  }

  private receive(data: RawData, isBinary: boolean): void {
    if (isBinary) {
      this.reply(errorFrame(-32600, 'Invalid Request: MCP messages are text frames of JSON'));
      return;
    }
    const buf = Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data);
    if (jsonNestingExceeds(buf, this.maxJsonDepth)) {
      this.reply(
        errorFrame(
          -32600,
          `Invalid Request: ${new JsonTooDeepError(this.maxJsonDepth, { frame: true }).message}`,
        ),
      );
      return;
    }
    const text = buf.toString('utf8');
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch (err) {
      this.reply(errorFrame(-32700, `Parse error: ${(err as Error).message}`));
      return;
    }
    const batch = Array.isArray(raw) ? raw : [raw];
    if (batch.length === 0) {
      this.reply(errorFrame(-32600, 'Invalid Request: empty batch'));
      return;
    }
    // The limit of HTTP batches: one frame cannot start thousands of requests.
    if (batch.length > MAX_BATCH) {
      this.reply(errorFrame(-32600, `Invalid Request: Batch must not exceed ${MAX_BATCH} messages`));
      return;
    }
    for (const item of batch) {
      const checked = checkMessage(item, this.envelope);
      if (!checked.ok) {
        if (!checked.silent) this.reply(JSON.stringify(checked.answer));
        continue;
      }
      try {
        this.onmessage?.(checked.message);
      } catch (err) {
        this.onerror?.(err as Error);
      }
    }
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.socket.readyState !== WebSocket.OPEN) {
        reject(new Error('the WebSocket is not open'));
        return;
      }
      this.socket.send(JSON.stringify(message), (err) => (err ? reject(err) : resolve()));
    });
  }

  async close(): Promise<void> {
    if (this.socket.readyState === WebSocket.OPEN || this.socket.readyState === WebSocket.CONNECTING) {
      this.socket.close(1000, 'closing');
    }
    this.finish();
  }
}
