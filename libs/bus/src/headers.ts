/** Header names askbus puts on NATS messages. */
export const H = {
  queryId: 'Askbus-Query-Id',
  callId: 'Askbus-Call-Id',
  /** Absolute deadline, epoch milliseconds. */
  deadline: 'Askbus-Deadline',
  /** The NATS user that started the query: it may cancel every call of it (running-work.ts). */
  origin: 'Askbus-Origin',
  /** Chunk sequence number in a stream, from 0; the end marker carries the next number. */
  seq: 'Askbus-Seq',
  /**
   * End of a stream: `last` (this message is the stream's last chunk), or an end marker with no
   * chunk: done | cancelled | error (the body is then an ErrorBody).
   */
  end: 'Askbus-End',
  heartbeat: 'Askbus-Heartbeat',
  /**
   * A stream message carrying this many chunks (2 or more) as one JSON array: a chunk its contract
   * lets wait (`joinsNext`) travelling with the chunk after it. One sequence number for them all.
   */
  chunks: 'Askbus-Chunks',
  /** Error code of a unary reply whose body is an ErrorBody. */
  error: 'Askbus-Error',
  traceparent: 'traceparent',
  tracestate: 'tracestate',
} as const;
