/**
 * The chat page: static files (HTML, CSS, native ES modules) served at `/` and `/chat/*`.
 * No build step and no external resources; the files are read once, when the gateway starts.
 */
import { readFileSync } from 'node:fs';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { AccessControl } from '../access';

export interface ChatOptions {
  /** Shown in the page's footer. */
  version: string;
  access: AccessControl;
}

const TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  css: 'text/css; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  svg: 'image/svg+xml',
};

/** The files under /chat/: a fixed list, so no request can name any other file. */
export const CHAT_FILES = ['app.js', 'render.js', 'sse.js', 'style.css', 'icon.svg'] as const;

/**
 * Only this origin's own files; item images may come from anywhere (they are the site's data),
 * and the answer stream goes back to this gateway.
 */
export const CHAT_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: https: http:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function load(name: string): string {
  return readFileSync(new URL(name, import.meta.url), 'utf8');
}

export async function chatRoutes(app: FastifyInstance, opts: ChatOptions): Promise<void> {
  // The page and its files are open to anyone (the conversation API under /chat/ claims its
  // own paths first: nlweb-chat/routes.ts).
  opts.access.addRule((_method, path) =>
    path === '/' || path === '/chat' || path.startsWith('/chat/') ? 'open' : undefined,
  );
  const page = load('index.html').replace('{{version}}', escapeHtml(opts.version));
  const files = new Map<string, string>(CHAT_FILES.map((f) => [f, load(f)]));

  const send = (reply: FastifyReply, name: string, body: string): FastifyReply =>
    reply
      .type(TYPES[name.split('.').pop() ?? ''] ?? 'application/octet-stream')
      .header('cache-control', 'no-cache')
      .header('x-content-type-options', 'nosniff')
      .header('content-security-policy', CHAT_CSP)
      .header('referrer-policy', 'no-referrer')
      .send(body);

  app.get('/', async (_req, reply) => send(reply, 'index.html', page));
  app.get('/chat', async (_req, reply) => reply.redirect('/'));
  app.get('/chat/', async (_req, reply) => reply.redirect('/'));
  app.get<{ Params: { file: string } }>('/chat/:file', async (req, reply) => {
    const body = files.get(req.params.file);
    if (body === undefined) return reply.callNotFound();
    return send(reply, req.params.file, body);
  });
}
