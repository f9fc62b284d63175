/** Request headers and API-key checks shared by every surface of the gateway (access.ts). */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** A request header's first value. */
export function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** The key a request presents: `Authorization: Bearer <key>`, else `X-API-Key: <key>`. */
export function presentedKey(req: IncomingMessage): string | undefined {
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(header(req, 'authorization') ?? '')?.[1];
  if (bearer) return bearer;
  const apiKey = header(req, 'x-api-key')?.trim();
  return apiKey || undefined;
}

/** SHA-256 of a key: equal-length digests, so comparing them tells nothing about the key's length. */
export const keyDigest = (key: string): Buffer => createHash('sha256').update(key, 'utf8').digest();

/** Whether two digests are equal, in constant time. */
export const digestsEqual = (a: Buffer, b: Buffer): boolean => a.length === b.length && timingSafeEqual(a, b);
