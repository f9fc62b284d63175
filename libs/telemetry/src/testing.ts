import { createServer, type Server } from 'node:http';

/** One span as OTLP/HTTP JSON carries it. */
export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: { key: string; value: { intValue?: string | number; stringValue?: string } }[];
  /** The `service.name` of the resource it was exported under (added by the collector). */
  service?: string;
}

export interface TestCollector {
  server: Server;
  url: string;
  /** Every span exported so far. */
  spans: OtlpSpan[];
}

/**
 * A stand-in OpenTelemetry collector for tests: a real HTTP server on 127.0.0.1 that takes
 * OTLP/HTTP JSON trace exports (OTEL_EXPORTER_OTLP_PROTOCOL=http/json) and keeps their spans.
 */
export function startTestCollector(): Promise<TestCollector> {
  const spans: OtlpSpan[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      if (req.url === '/v1/traces') {
        const parsed = JSON.parse(body) as {
          resourceSpans: {
            resource?: { attributes?: OtlpSpan['attributes'] };
            scopeSpans: { spans: OtlpSpan[] }[];
          }[];
        };
        for (const rs of parsed.resourceSpans) {
          const service = rs.resource?.attributes?.find((a) => a.key === 'service.name')?.value.stringValue;
          for (const ss of rs.scopeSpans) spans.push(...ss.spans.map((s) => ({ ...s, service })));
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const addr = server.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      resolve({ server, url: `http://127.0.0.1:${port}`, spans });
    }),
  );
}
