/**
 * The load generator of bench:load: streaming /ask requests over node:http (one socket per
 * open stream, no socket cap), read as SSE while they arrive. Each stream is timed (headers,
 * first result, end-nlweb-response, close) and its failure, if any, is given one kind.
 */
import http from 'node:http';

export interface DemoQuery {
  site: string;
  query: string;
}

/** A mix over both demo sites; a stream takes query i % length. */
export const DEMO_QUERIES: DemoQuery[] = [
  { site: 'movies', query: 'westerns with clint eastwood' },
  { site: 'cars', query: 'fuel efficient japanese cars' },
  { site: 'movies', query: 'science fiction movies by ridley scott' },
  { site: 'cars', query: 'powerful american v8 from the 1970s' },
  { site: 'movies', query: 'funny animated films for kids' },
  { site: 'cars', query: 'cheap european hatchback' },
  { site: 'movies', query: 'highly rated dramas from the 1990s' },
  { site: 'cars', query: 'sports cars with more than 300 horsepower' },
  { site: 'movies', query: 'horror movies' },
  { site: 'movies', query: 'steven spielberg adventure' },
  { site: 'cars', query: 'family car with good mileage' },
  { site: 'movies', query: 'romantic comedy' },
];

/** One stream, times in ms from its own start (NaN: never happened). */
export interface StreamSample {
  startedAt: number;
  headersMs: number;
  firstResultMs: number;
  endMessageMs: number;
  closedMs: number;
  results: number;
  /** Why it failed; undefined when it ended with end-nlweb-response and no error message. */
  error?: string;
}

export interface ClientOptions {
  /** A stream that has not closed after this long is destroyed and counted as `client-timeout`. */
  timeoutMs: number;
}

/**
 * Opens streams against one gateway and counts how many are open at once: `open` from the
 * request until the socket closes, `streaming` from the response headers until it closes.
 */
export class StreamClient {
  private readonly agent: http.Agent;
  open = 0;
  streaming = 0;
  peakOpen = 0;
  peakStreaming = 0;
  private nextQuery = 0;

  constructor(
    private readonly base: URL,
    private readonly opts: ClientOptions,
  ) {
    // No socket cap: every concurrent stream gets its own connection, as browsers' EventSources
    // would; idle sockets are kept so a closed loop reuses them instead of piling up TIME_WAIT.
    this.agent = new http.Agent({ keepAlive: true, maxSockets: Infinity, maxFreeSockets: 100_000 });
  }

  resetPeaks(): void {
    this.peakOpen = this.open;
    this.peakStreaming = this.streaming;
  }

  /** The next query of the mix, round robin. */
  ask(): Promise<StreamSample> {
    const q = DEMO_QUERIES[this.nextQuery++ % DEMO_QUERIES.length]!;
    return this.stream(q);
  }

  stream(q: DemoQuery): Promise<StreamSample> {
    const url = new URL('/ask', this.base);
    url.searchParams.set('query', q.query);
    url.searchParams.set('site', q.site);
    url.searchParams.set('streaming', 'true');
    const startedAt = performance.now();
    const sample: StreamSample = {
      startedAt,
      headersMs: NaN,
      firstResultMs: NaN,
      endMessageMs: NaN,
      closedMs: NaN,
      results: 0,
    };
    const since = () => performance.now() - startedAt;
    this.open++;
    this.peakOpen = Math.max(this.peakOpen, this.open);
    return new Promise<StreamSample>((resolve) => {
      let settled = false;
      let headers = false;
      const finish = (error?: string): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        this.open--;
        if (headers) this.streaming--;
        sample.closedMs = since();
        if (error && !sample.error) sample.error = error;
        resolve(sample);
      };
      const req = http.get(url, { agent: this.agent, headers: { accept: 'text/event-stream' } }, (res) => {
        sample.headersMs = since();
        headers = true;
        this.streaming++;
        this.peakStreaming = Math.max(this.peakStreaming, this.streaming);
        if (res.statusCode !== 200) {
          res.resume();
          res.on('end', () => finish(`http-${res.statusCode}`));
          res.on('error', () => finish(`http-${res.statusCode}`));
          return;
        }
        res.setEncoding('utf8');
        let buffer = '';
        res.on('data', (chunk: string) => {
          buffer += chunk;
          let cut: number;
          while ((cut = buffer.indexOf('\n\n')) >= 0) {
            onEvent(buffer.slice(0, cut), sample, since);
            buffer = buffer.slice(cut + 2);
          }
        });
        res.on('end', () => finish(Number.isNaN(sample.endMessageMs) ? 'no-end-message' : undefined));
        res.on('error', (err: NodeJS.ErrnoException) => finish(`net-${err.code ?? 'error'}`));
      });
      req.on('error', (err: NodeJS.ErrnoException) => finish(`net-${err.code ?? 'error'}`));
      const timer = setTimeout(() => {
        finish('client-timeout');
        req.destroy();
      }, this.opts.timeoutMs);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

/** One SSE event block: `data:` lines joined; comments (keepalives) ignored. */
function onEvent(block: string, sample: StreamSample, since: () => number): void {
  let data = '';
  for (const line of block.split('\n')) if (line.startsWith('data:')) data += line.slice(5);
  if (!data) return;
  let msg: { message_type?: string; content?: unknown; code?: unknown; error?: unknown };
  try {
    msg = JSON.parse(data) as typeof msg;
  } catch {
    sample.error ??= 'bad-sse-json';
    return;
  }
  if (msg.message_type === 'result' && Array.isArray(msg.content)) {
    if (Number.isNaN(sample.firstResultMs)) sample.firstResultMs = since();
    sample.results += msg.content.length;
  } else if (msg.message_type === 'error') {
    sample.error ??= `error-message-${typeof msg.code === 'string' ? msg.code : 'unknown'}`;
  } else if (msg.message_type === 'end-nlweb-response') {
    sample.endMessageMs = since();
  }
}

/** Every stream opened at once (as close together as the event loop allows); all awaited. */
export async function burst(
  client: StreamClient,
  streams: number,
): Promise<{ samples: StreamSample[]; wallMs: number }> {
  client.resetPeaks();
  const t0 = performance.now();
  const pending: Promise<StreamSample>[] = [];
  for (let i = 0; i < streams; i++) pending.push(client.ask());
  const samples = await Promise.all(pending);
  return { samples, wallMs: performance.now() - t0 };
}

/**
 * `clients` loops, each re-asking as soon as its stream closes, for `seconds`. Counts the
 * streams that closed inside the window; those still open at its end are awaited, not counted.
 */
export async function closedLoop(
  client: StreamClient,
  clients: number,
  seconds: number,
  onSample?: (s: StreamSample) => void,
): Promise<{ samples: StreamSample[]; windowMs: number; lateStreams: number }> {
  client.resetPeaks();
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  const samples: StreamSample[] = [];
  let late = 0;
  const loop = async (): Promise<void> => {
    while (performance.now() < end) {
      const s = await client.ask();
      onSample?.(s);
      if (s.startedAt + s.closedMs <= end) samples.push(s);
      else late++;
    }
  };
  await Promise.all(Array.from({ length: clients }, loop));
  return { samples, windowMs: end - t0, lateStreams: late };
}
