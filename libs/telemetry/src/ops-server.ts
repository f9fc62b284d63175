import { createServer, type Server } from 'node:http';
import type { Registry } from 'prom-client';

export interface OpsServer {
  server: Server;
  port: number;
  close(): Promise<void>;
}

/**
 * The operations port of a service without HTTP of its own: /healthz (the process answers),
 * /readyz (it takes work: 503 once it drains) and /metrics (Prometheus text format).
 */
export function startOpsServer(opts: {
  port: number;
  host?: string;
  registry: Registry;
  ready: () => boolean;
}): Promise<OpsServer> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET') {
      res.writeHead(405, { allow: 'GET' }).end();
    } else if (path === '/healthz') {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
    } else if (path === '/readyz') {
      const ready = opts.ready();
      res
        .writeHead(ready ? 200 : 503, { 'content-type': 'application/json' })
        .end(JSON.stringify({ status: ready ? 'ready' : 'not_ready' }));
    } else if (path === '/metrics') {
      opts.registry.metrics().then(
        (text) => res.writeHead(200, { 'content-type': opts.registry.contentType }).end(text),
        (err: unknown) => res.writeHead(500).end(String(err)),
      );
    } else {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
    }
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host ?? '0.0.0.0', () => {
      const addr = server.address();
      resolve({
        server,
        port: typeof addr === 'object' && addr ? addr.port : opts.port,
        close: () => new Promise((r) => server.close(() => r())),
      });
    });
  });
}
