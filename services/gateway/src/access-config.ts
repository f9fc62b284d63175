/**
 * The access-control configuration of the gateway: API keys (GatewayOptions.auth, else
 * ASKBUS_API_KEYS and ASKBUS_API_KEYS_FILE), the per-client rate limit and stream cap, and the
 * legacy per-surface tokens (ASKBUS_MCP_TOKEN, ASKBUS_A2A_TOKEN). Parsed with zod; a bad
 * configuration throws an AccessConfigError at start-up naming the entry, never the key.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';

/** The protected surfaces: a key valid for a surface opens it; a general key opens all. */
export type Surface = 'rest' | 'mcp' | 'a2a';

export interface ApiKey {
  client: string;
  key: string;
  /** Surfaces this key opens; undefined: every surface. */
  surfaces?: readonly Surface[];
}

export interface AccessConfig {
  keys: ApiKey[];
  /** Requests per client (or per IP without a key) per minute; 0: no limit. */
  ratePerMinute: number;
  /** Concurrently open requests and WebSockets per client; 0: no cap. */
  maxStreamsPerClient: number;
}

/** GatewayOptions.auth. */
export interface AuthOptions {
  /** The API keys; when given, ASKBUS_API_KEYS and ASKBUS_API_KEYS_FILE are not read. */
  keys?: { client: string; key: string }[];
  /** Else env ASKBUS_RATE_LIMIT_PER_MINUTE (unset or 0: off). */
  ratePerMinute?: number;
  /** Else env ASKBUS_MAX_STREAMS_PER_CLIENT (unset or 0: off). */
  maxStreamsPerClient?: number;
}

/** The legacy single tokens, each a key valid for its surface only. */
export interface LegacyTokens {
  mcp?: string | undefined;
  a2a?: string | undefined;
}

export class AccessConfigError extends Error {
  constructor(message: string) {
    super(`access control: ${message}`);
    this.name = 'AccessConfigError';
  }
}

const ClientName = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, 'a client name is 1 to 64 letters, digits, ".", "_" or "-"');
// Keys travel in headers: printable ASCII without spaces; 8 characters at least so that a typo
// such as a stray word does not become a key.
const Key = z
  .string()
  .min(8, 'a key has at least 8 characters')
  .max(512, 'a key has at most 512 characters')
  .regex(/^[\x21-\x7e]+$/, 'a key is printable ASCII without spaces');
const KeyEntry = z.object({ client: ClientName, key: Key }).strict();
const Count = z.coerce.number().int('must be a whole number').min(0, 'must be 0 or more');

const issueText = (e: z.ZodError): string => e.issues.map((i) => i.message).join('; ');

/** `client:key` or a bare key (client `key-<position>`), as in ASKBUS_API_KEYS and its file. */
function parseEntry(text: string, position: number, where: string): ApiKey {
  const at = text.indexOf(':');
  const candidate =
    at < 0
      ? { client: `key-${position}`, key: text }
      : { client: text.slice(0, at), key: text.slice(at + 1) };
  const parsed = KeyEntry.safeParse(candidate);
  if (!parsed.success) throw new AccessConfigError(`${where}: ${issueText(parsed.error)}`);
  return parsed.data;
}

function count(name: string, option: number | undefined, env: NodeJS.ProcessEnv): number {
  const raw = option ?? (env[name]?.trim() || 0);
  const parsed = Count.safeParse(raw);
  if (!parsed.success) {
    const what = option !== undefined ? name.toLowerCase() : name;
    throw new AccessConfigError(`${what} ${issueText(parsed.error)}, got ${JSON.stringify(raw)}`);
  }
  return parsed.data;
}

/** Reads the keys of ASKBUS_API_KEYS (comma list) and ASKBUS_API_KEYS_FILE (one a line, # comments). */
function keysFromEnv(env: NodeJS.ProcessEnv, readFile: (path: string) => string): ApiKey[] {
  const entries: { text: string; where: string }[] = [];
  (env.ASKBUS_API_KEYS ?? '').split(',').forEach((text, i) => {
    if (text.trim()) entries.push({ text: text.trim(), where: `ASKBUS_API_KEYS entry ${i + 1}` });
  });
  const file = env.ASKBUS_API_KEYS_FILE?.trim();
  if (file) {
    let content: string;
    try {
      content = readFile(file);
    } catch (err) {
      throw new AccessConfigError(
        `ASKBUS_API_KEYS_FILE ${file} cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)})`,
      );
    }
    content.split(/\r?\n/).forEach((line, i) => {
      const text = line.trim();
      if (text && !text.startsWith('#')) entries.push({ text, where: `${file} line ${i + 1}` });
    });
  }
  return entries.map((e, i) => parseEntry(e.text, i + 1, e.where));
}

export function accessConfig(
  opts: AuthOptions = {},
  legacy: LegacyTokens = {},
  env: NodeJS.ProcessEnv = process.env,
  readFile: (path: string) => string = (path) => readFileSync(path, 'utf8'),
): AccessConfig {
  let keys: ApiKey[];
  if (opts.keys) {
    keys = opts.keys.map((k, i) => {
      const parsed = KeyEntry.safeParse(k);
      if (!parsed.success) throw new AccessConfigError(`auth.keys[${i}]: ${issueText(parsed.error)}`);
      return parsed.data;
    });
  } else keys = keysFromEnv(env, readFile);

  const seen = new Set<string>();
  for (const k of keys) {
    if (seen.has(k.key)) throw new AccessConfigError(`the key of client "${k.client}" is configured twice`);
    seen.add(k.key);
  }
  // The legacy tokens keep their old (unchecked) shape so existing deployments still start.
  if (legacy.mcp) keys.push({ client: 'mcp-token', key: legacy.mcp, surfaces: ['mcp'] });
  if (legacy.a2a) keys.push({ client: 'a2a-token', key: legacy.a2a, surfaces: ['a2a'] });

  return {
    keys,
    ratePerMinute: count('ASKBUS_RATE_LIMIT_PER_MINUTE', opts.ratePerMinute, env),
    maxStreamsPerClient: count('ASKBUS_MAX_STREAMS_PER_CLIENT', opts.maxStreamsPerClient, env),
  };
}
