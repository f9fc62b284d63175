/**
 * Tickets for WebSockets opened where no header can be set (a browser's `new WebSocket`, the MCP
 * SDK's WebSocket transport): a client with a key asks `POST /mcp/ws-ticket` for one and opens
 * `/mcp/ws?ticket=…` within a minute. A ticket names the client and surface, not the key, so a
 * logged URL gives nothing away for long; it is signed with a secret derived from the configured
 * keys, so every gateway replica with the same keys accepts it.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import type { Surface } from './access-config';

/** How long a ticket may wait before its WebSocket opens. */
export const TICKET_TTL_SECONDS = 60;

const TicketPayload = z.object({ c: z.string(), s: z.string(), e: z.number().int(), n: z.string() });

export class WsTickets {
  private readonly secret: Buffer;

  /** `keyDigests`: the SHA-256 of every configured key; the secret is derived from them all. */
  constructor(keyDigests: readonly Buffer[]) {
    const h = createHash('sha256').update('askbus ws ticket\0');
    for (const d of [...keyDigests].sort(Buffer.compare)) h.update(d);
    this.secret = h.digest();
  }

  issue(client: string, surface: Surface, now = Date.now()): { ticket: string; expiresIn: number } {
    const payload = {
      c: client,
      s: surface,
      e: Math.floor(now / 1000) + TICKET_TTL_SECONDS,
      n: randomBytes(9).toString('base64url'),
    };
    const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
    return { ticket: `${body}.${this.sign(body)}`, expiresIn: TICKET_TTL_SECONDS };
  }

  /** The client a valid, unexpired ticket for `surface` names; undefined for anything else. */
  verify(ticket: string, surface: Surface, now = Date.now()): string | undefined {
    const [body, sig] = ticket.split('.');
    if (!body || !sig || ticket.length > 1_000) return undefined;
    const expected = Buffer.from(this.sign(body));
    const given = Buffer.from(sig);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) return undefined;
    let parsed;
    try {
      parsed = TicketPayload.safeParse(JSON.parse(Buffer.from(body, 'base64url').toString('utf8')));
    } catch {
      return undefined;
    }
    if (!parsed.success || parsed.data.s !== surface || parsed.data.e < Math.floor(now / 1000))
      return undefined;
    return parsed.data.c;
  }

  private sign(body: string): string {
    return createHmac('sha256', this.secret).update(body).digest('base64url');
  }
}

/** The `ticket` query parameter of a request URL. */
export function ticketOf(url: string | undefined): string | undefined {
  const q = (url ?? '').split('?', 2)[1];
  return q ? (new URLSearchParams(q).get('ticket') ?? undefined) : undefined;
}
