/** Request headers and Bearer-token checks shared by the protocol plugins (MCP, A2A). */
import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** A request header's first value. */
export function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/**
 * Whether the request carries `Authorization: Bearer <token>` with this token; always true when
 * no token is configured. Compared in constant time so the answer's timing tells nothing.
 */
export function bearerMatches(req: IncomingMessage, token: string | undefined): boolean {
  if (!token) return true;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header(req, 'authorization') ?? '');
  if (!m?.[1]) return false;
  const given = Buffer.from(m[1]);
  const want = Buffer.from(token);
  return given.length === want.length && timingSafeEqual(given, want);
}
