import { createInbox } from '@nats-io/nats-core';
import type { Msg, NatsConnection, Subscription } from '@nats-io/nats-core';

/**
 * The replies to one outgoing call: the subject to send them to and its messages, in order.
 * `next()` resolves `done` once the connection closed; `close()` stops taking messages.
 */
export interface ReplyInbox {
  readonly subject: string;
  readonly messages: AsyncIterator<Msg>;
  close(): void;
}

/**
 * One wildcard subscription (`<inbox>.*`) for the replies to every call of a connection,
 * each call under a token of its own, as nats.js does for its own requests.
 *
 * Why: a subscription per call costs a SUB and an UNSUB written to the socket and processed by
 * nats-server for each call; a query makes several calls (names, search, a ranking call per
 * batch), and those writes were the service path's largest single cost. The subject stays an
 * inbox of the connection's user (`_INBOX_<user>.<mux>.<call>`), which the responders' reply
 * check and the NATS permissions accept as before.
 */
export class ReplyMux {
  private sub: Subscription | undefined;
  private prefix = '';
  private readonly open = new Map<string, CallReplies>();
  private next = 0;

  constructor(
    private readonly nc: NatsConnection,
    private readonly inboxPrefix: string | undefined,
  ) {}

  /** A new reply subject; subscribes the wildcard on first use. */
  inbox(): ReplyInbox {
    if (!this.sub) this.start();
    const token = (this.next++).toString(36);
    const replies = new CallReplies(() => this.open.delete(token));
    this.open.set(token, replies);
    return { subject: `${this.prefix}.${token}`, messages: replies, close: () => replies.close() };
  }

  /** Calls waiting for replies now (tests; a leak shows here). */
  get pending(): number {
    return this.open.size;
  }

  private start(): void {
    this.prefix = createInbox(this.inboxPrefix);
    const sub = this.nc.subscribe(`${this.prefix}.*`, {
      callback: (_err, msg) => {
        const token = msg.subject.slice(this.prefix.length + 1);
        // a late reply to a call that gave up (timeout, cancel, sent again): nobody waits for it
        this.open.get(token)?.push(msg);
      },
    });
    this.sub = sub;
    // The connection closed (or the subscription was dropped): every waiting call ends.
    void sub.closed.then(() => {
      if (this.sub === sub) this.sub = undefined;
      for (const replies of [...this.open.values()]) replies.end();
    });
  }
}

/** The messages of one call: a queue that an async iterator reads. */
class CallReplies implements AsyncIterator<Msg> {
  private readonly queue: Msg[] = [];
  private waiting: ((r: IteratorResult<Msg>) => void) | undefined;
  private ended = false;

  constructor(private readonly forget: () => void) {}

  push(msg: Msg): void {
    if (this.ended) return;
    const waiting = this.waiting;
    if (waiting) {
      this.waiting = undefined;
      waiting({ value: msg, done: false });
    } else this.queue.push(msg);
  }

  /** No more messages will come (the connection closed): readers see `done`. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.forget();
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.({ value: undefined, done: true });
  }

  /** The caller is finished with this call: later messages are dropped. */
  close(): void {
    this.end();
    this.queue.length = 0;
  }

  next(): Promise<IteratorResult<Msg>> {
    const msg = this.queue.shift();
    if (msg) return Promise.resolve({ value: msg, done: false });
    if (this.ended) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve) => {
      this.waiting = resolve;
    });
  }
}
