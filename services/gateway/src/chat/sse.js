// Reads a server-sent event stream from a fetch() Response, one parsed `data:` JSON at a time.
// fetch (not EventSource) so that the page can send headers, see HTTP errors and abort.

/**
 * Splits SSE text into events. Feed it chunks; it returns the complete events so far.
 * @returns {{ push(chunk: string): Array<{ event: string, data: string }>, flush(): Array<{ event: string, data: string }> }}
 */
export function sseParser() {
  let buffer = '';
  const parseBlock = (block) => {
    let event = 'message';
    const data = [];
    for (const line of block.split('\n')) {
      if (line === '' || line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? '' : line.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'event') event = value;
      else if (field === 'data') data.push(value);
    }
    return data.length ? [{ event, data: data.join('\n') }] : [];
  };
  const take = (all) => {
    const out = [];
    let at;
    while ((at = buffer.indexOf('\n\n')) >= 0 || (all && buffer.trim() !== '')) {
      const block = at >= 0 ? buffer.slice(0, at) : buffer;
      buffer = at >= 0 ? buffer.slice(at + 2) : '';
      out.push(...parseBlock(block));
    }
    return out;
  };
  return {
    push(chunk) {
      buffer += chunk.replace(/\r\n?/g, '\n');
      return take(false);
    },
    flush() {
      return take(true);
    },
  };
}

/**
 * Calls `onMessage` with each JSON message of the stream; resolves when the stream ends.
 * Rejects with the fetch's AbortError when the signal aborts, or with a network error.
 * @param {ReadableStream<Uint8Array>} body
 * @param {(message: Record<string, unknown>) => void} onMessage
 */
export async function readMessages(body, onMessage) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const parser = sseParser();
  const deliver = (events) => {
    for (const e of events) {
      let message;
      try {
        message = JSON.parse(e.data);
      } catch {
        continue; // not JSON: not an NLWeb message
      }
      if (message && typeof message === 'object') onMessage(message);
    }
  };
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    deliver(parser.push(decoder.decode(value, { stream: true })));
  }
  deliver(parser.push(decoder.decode()));
  deliver(parser.flush());
}
