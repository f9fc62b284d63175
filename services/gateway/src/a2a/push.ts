/**
 * Push notifications with an SSRF guard: a webhook URL must be http(s), and every address its
 * host resolves to must be public (no private, loopback, link-local, CGNAT, multicast or
 * reserved range) unless `allowPrivate` says otherwise. The check runs when a config is stored
 * and again at each delivery, on the very addresses the connection uses (no DNS rebinding).
 * Deliveries carry the config's credentials and an HMAC-SHA256 signature, are ordered per task,
 * and are retried with exponential backoff.
 */
import { createHmac } from 'node:crypto';
import { lookup as dnsLookup } from 'node:dns';
import type { LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { V1PushNotificationSerializer } from '@a2a-js/sdk/server';
import type {
  PushNotificationSender,
  PushNotificationSerializer,
  PushNotificationStore,
  ServerCallContext,
  StoredPushNotificationConfig,
} from '@a2a-js/sdk/server';
import { V03PushNotificationSerializer } from '@a2a-js/sdk/compat/v0_3/server';
import type { StreamResponse, Task, TaskPushNotificationConfig } from '@a2a-js/sdk';
import { RequestMalformedError } from '@a2a-js/sdk/errors';

export interface PushOptions {
  /** Allow webhooks on private, loopback and link-local addresses (tests, closed networks). Default false. */
  allowPrivate?: boolean;
  /** Key of the `X-A2A-Signature` HMAC; default: the config's token (no token: no signature). */
  signingSecret?: string;
  /** Retries after the first attempt (default 3). */
  retries?: number;
  /** First backoff (ms), doubled each retry, with jitter (default 500). */
  backoffMs?: number;
  /** Time limit of one delivery attempt (ms), default 10 s. */
  timeoutMs?: number;
  /** Called with the outcome of each delivery (logs, metrics, tests). */
  onDelivery?: (d: DeliveryReport) => void;
}

export interface DeliveryReport {
  taskId: string;
  configId: string;
  url: string;
  ok: boolean;
  attempts: number;
  status?: number;
  error?: string;
}

export const SIGNATURE_HEADER = 'X-A2A-Signature';
export const TOKEN_HEADER = 'X-A2A-Notification-Token';

/**
 * Global unicast IPv6 (RFC 4291 §2.4): everything else is loopback, link- or site-local,
 * unique-local, multicast, reserved, or the IPv4-compatible ::/96 (`[::127.0.0.1]`).
 */
const GLOBAL_UNICAST_V6 = ipaddr.IPv6.parseCIDR('2000::/3');
/** IPv6 forms that carry an IPv4 address in their last 32 bits: that address decides. */
const EMBEDS_V4 = new Set(['ipv4Mapped', 'rfc6145']);
const NAT64_WELL_KNOWN = ipaddr.IPv6.parseCIDR('64:ff9b::/96');

/** The IPv4 address in the last 32 bits of an IPv6 address. */
function lastV4(v6: ipaddr.IPv6): ipaddr.IPv4 {
  const b = v6.toByteArray();
  return new ipaddr.IPv4(b.slice(12, 16));
}

/**
 * True for an address a webhook must not reach by default. An allowlist: only public unicast
 * is allowed (ipaddr.js's ranges), so no spelling gets around it: IPv4 in decimal, hex or octal
 * (`2130706433`, `0x7f.1`, `0177.0.0.1`), IPv4-mapped, -translated and NAT64 IPv6 (the IPv4 inside
 * decides), IPv4-compatible, 6to4 and Teredo IPv6, and anything that is no address at all.
 */
export function isPrivateAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  if (!ipaddr.isValid(bare)) return true;
  let ip = ipaddr.parse(bare);
  if (ip.kind() === 'ipv6') {
    const v6 = ip as ipaddr.IPv6;
    if (EMBEDS_V4.has(v6.range()) || v6.match(NAT64_WELL_KNOWN)) ip = lastV4(v6);
    else return !(v6.match(GLOBAL_UNICAST_V6) && v6.range() === 'unicast');
  }
  return ip.range() !== 'unicast';
}

const resolveAll = (host: string): Promise<LookupAddress[]> =>
  new Promise((resolve, reject) =>
    dnsLookup(host, { all: true, verbatim: true }, (err, addrs) => (err ? reject(err) : resolve(addrs))),
  );

/** Addresses of `host` (an IP literal is its own); throws when one of them is refused. */
export async function checkedAddresses(host: string, allowPrivate: boolean): Promise<LookupAddress[]> {
  const bare = host.replace(/^\[|\]$/g, '');
  const addrs: LookupAddress[] = isIP(bare)
    ? [{ address: bare, family: isIP(bare) }]
    : await resolveAll(bare).catch((err: Error) => {
        throw new Error(`cannot resolve ${bare}: ${err.message}`);
      });
  if (addrs.length === 0) throw new Error(`${bare} has no address`);
  if (!allowPrivate) {
    const bad = addrs.find((a) => isPrivateAddress(a.address));
    if (bad) throw new Error(`${bare} resolves to ${bad.address}, a private, loopback or link-local address`);
  }
  return addrs;
}

/** Checks a webhook URL; the error explains why it is refused. */
export async function checkWebhookUrl(raw: string, allowPrivate: boolean): Promise<URL> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(`not a URL: ${JSON.stringify(raw)}`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error('the URL must be http or https');
  if (url.username || url.password) throw new Error('the URL must not carry credentials');
  await checkedAddresses(url.hostname, allowPrivate);
  return url;
}

/** The validator for KvPushStore: refused URLs are invalid params of the call. */
export function webhookValidator(allowPrivate: boolean) {
  return async (config: TaskPushNotificationConfig): Promise<void> => {
    try {
      await checkWebhookUrl(config.url, allowPrivate);
    } catch (err) {
      throw new RequestMalformedError(`push notification url refused: ${(err as Error).message}`);
    }
  };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms).unref());

export function signature(secret: string, timestamp: number, body: string): string {
  const mac = createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');
  return `t=${timestamp},v1=${mac}`;
}

interface Attempt {
  status?: number;
  error?: string;
  retry: boolean;
}

export class GuardedPushSender implements PushNotificationSender {
  private readonly chains = new Map<string, Promise<void>>();
  private readonly serializers: Record<string, PushNotificationSerializer> = {
    '1.0': new V1PushNotificationSerializer(),
    '0.3': new V03PushNotificationSerializer(),
  };
  private closed = false;

  constructor(
    private readonly store: PushNotificationStore,
    private readonly opts: PushOptions = {},
  ) {}

  /** Queues the deliveries of one event; returns at once (the stream does not wait). */
  async send(event: StreamResponse, context: ServerCallContext, task?: Task): Promise<void> {
    const taskId = taskIdOf(event) || task?.id || '';
    if (!taskId || this.closed) return;
    // The configs registered when the event happened (a config created later gets later events).
    const configs = this.configsOf(taskId, context);
    configs.catch(() => undefined);
    const prev = this.chains.get(taskId) ?? Promise.resolve();
    const next = prev
      .then(async () => this.deliverAll(taskId, await configs, event, task))
      .catch(() => undefined)
      .finally(() => {
        if (this.chains.get(taskId) === next) this.chains.delete(taskId);
      });
    this.chains.set(taskId, next);
  }

  /** Resolves when every queued delivery has finished (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.chains.size > 0) await Promise.all([...this.chains.values()]);
  }

  close(): void {
    this.closed = true;
  }

  private async configsOf(
    taskId: string,
    context: ServerCallContext,
  ): Promise<StoredPushNotificationConfig[]> {
    if (this.store.loadWithMetadata) return this.store.loadWithMetadata(taskId, context);
    return (await this.store.load(taskId, context)).map((config) => ({
      config,
      wireVersion: context.requestedVersion,
    }));
  }

  private async deliverAll(
    taskId: string,
    stored: StoredPushNotificationConfig[],
    event: StreamResponse,
    task?: Task,
  ): Promise<void> {
    await Promise.all(
      stored.map(async ({ config, wireVersion }) => {
        const serializer = this.serializers[wireVersion] ?? this.serializers['1.0']!;
        const { body, contentType } = serializer.serialize(event, task);
        await this.deliver(taskId, config, body, contentType);
      }),
    );
  }

  private async deliver(
    taskId: string,
    config: TaskPushNotificationConfig,
    body: string,
    contentType: string,
  ): Promise<void> {
    const retries = this.opts.retries ?? 3;
    const base = this.opts.backoffMs ?? 500;
    let last: Attempt = { retry: false };
    let attempts = 0;
    for (let i = 0; i <= retries && !this.closed; i++) {
      if (i > 0) await sleep(base * 2 ** (i - 1) * (0.75 + Math.random() * 0.5));
      attempts++;
      last = await this.attempt(config, body, contentType);
      if (!last.retry) break;
    }
    const ok = last.status !== undefined && last.status >= 200 && last.status < 300;
    this.opts.onDelivery?.({
      taskId,
      configId: config.id,
      url: config.url,
      ok,
      attempts,
      ...(last.status !== undefined ? { status: last.status } : {}),
      ...(last.error ? { error: last.error } : {}),
    });
  }

  private async attempt(
    config: TaskPushNotificationConfig,
    body: string,
    contentType: string,
  ): Promise<Attempt> {
    const allowPrivate = this.opts.allowPrivate ?? false;
    let url: URL;
    let addrs: LookupAddress[];
    try {
      url = new URL(config.url);
      if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error('not http(s)');
      addrs = await checkedAddresses(url.hostname, allowPrivate);
    } catch (err) {
      // A refused address stays refused; a name that does not resolve may come back.
      const msg = (err as Error).message;
      return { error: msg, retry: msg.startsWith('cannot resolve') };
    }
    const now = Math.floor(Date.now() / 1000);
    const headers: Record<string, string | number> = {
      'content-type': contentType,
      'content-length': Buffer.byteLength(body),
      'user-agent': 'askbus-a2a-push/1',
    };
    if (config.authentication?.scheme) {
      headers.authorization = `${config.authentication.scheme} ${config.authentication.credentials}`.trim();
    }
    if (config.token) headers[TOKEN_HEADER.toLowerCase()] = config.token;
    const secret = this.opts.signingSecret ?? config.token;
    if (secret) headers[SIGNATURE_HEADER.toLowerCase()] = signature(secret, now, body);
    // Connect only to the addresses that were checked.
    const pinned = (
      _host: string,
      options: { all?: boolean },
      cb: (err: Error | null, address: string | LookupAddress[], family?: number) => void,
    ): void => {
      const first = addrs[0]!;
      if (options.all) cb(null, addrs);
      else cb(null, first.address, first.family);
    };
    const mod = url.protocol === 'https:' ? https : http;
    return new Promise<Attempt>((resolve) => {
      const req = mod.request(
        url,
        {
          method: 'POST',
          headers,
          lookup: pinned as never,
          timeout: this.opts.timeoutMs ?? 10_000,
        },
        (res) => {
          res.resume();
          const status = res.statusCode ?? 0;
          // Redirects are not followed: the target was not checked.
          resolve({ status, retry: status >= 500 || status === 429 || status === 408 });
        },
      );
      req.on('timeout', () => req.destroy(new Error('timed out')));
      req.on('error', (err) => resolve({ error: err.message, retry: true }));
      req.end(body);
    });
  }
}

function taskIdOf(event: StreamResponse): string {
  const p = event.payload;
  switch (p?.$case) {
    case 'task':
      return p.value.id;
    case 'statusUpdate':
    case 'artifactUpdate':
      return p.value.taskId;
    case 'message':
      return p.value.taskId;
    default:
      return '';
  }
}
