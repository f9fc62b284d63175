/**
 * The calls a bus is serving, by query and call id, with who may cancel them.
 *
 * A cancel arrives on `ask.v1.cancel.<caller>.<queryId>[.<callId>]`, and NATS lets a user publish
 * only its own `<caller>` token (permissions.ts). A call may be cancelled by the user that made it
 * (the user of its reply inbox) and by the user that started the query (the origin header, which
 * `onward()` passes along), so a gateway's cancel still stops a query's work in every service at
 * once. On a bus without NATS users there are no identities to check: any cancel of the query
 * applies, as before users existed.
 */
import { CANCEL_PREFIX } from '@askbus/contracts';
import { BusError } from './errors';

export interface CancelRequest {
  /** The user that published the cancel (its subject's caller token). */
  by: string;
  queryId: string;
  callId: string | undefined;
}

/** `ask.v1.cancel.<caller>.<queryId>[.<callId>]`, or undefined for any other shape. */
export function parseCancelSubject(subject: string): CancelRequest | undefined {
  if (!subject.startsWith(`${CANCEL_PREFIX}.`)) return undefined;
  const tokens = subject.slice(CANCEL_PREFIX.length + 1).split('.');
  if (tokens.length < 2 || tokens.length > 3 || tokens.some((t) => t === '')) return undefined;
  const [by, queryId, callId] = tokens as [string, string, string | undefined];
  return { by, queryId, callId };
}

/** Who may stop one running call. */
export interface CallOwners {
  /** The user whose inbox the call answers to. */
  caller: string;
  /** The user that started the query, when the request said so. */
  origin: string | undefined;
}

interface Running extends CallOwners {
  callId: string;
  controller: AbortController;
}

export class RunningWork {
  /** A set per query: two requests may claim the same call id, and neither hides the other. */
  private readonly byQuery = new Map<string, Set<Running>>();

  /** `checkOwners`: the bus runs as a NATS user, so a cancel must come from an owner. */
  constructor(private readonly checkOwners: boolean) {}

  /** Registers a call; the returned function forgets it. */
  add(queryId: string, callId: string, owners: CallOwners, controller: AbortController): () => void {
    let calls = this.byQuery.get(queryId);
    if (!calls) this.byQuery.set(queryId, (calls = new Set()));
    const entry: Running = { ...owners, callId, controller };
    calls.add(entry);
    return () => {
      calls.delete(entry);
      if (calls.size === 0 && this.byQuery.get(queryId) === calls) this.byQuery.delete(queryId);
    };
  }

  /** Aborts what the cancel may stop; counts what it stopped and what it was refused. */
  cancel(req: CancelRequest): { aborted: number; refused: number } {
    let aborted = 0;
    let refused = 0;
    for (const call of this.byQuery.get(req.queryId) ?? []) {
      if (req.callId !== undefined && call.callId !== req.callId) continue;
      if (this.checkOwners && req.by !== call.caller && req.by !== call.origin) {
        refused++;
        continue;
      }
      call.controller.abort(new BusError('cancelled', 'cancelled'));
      aborted++;
    }
    return { aborted, refused };
  }

  /** Aborts every call (drain past its grace period). */
  abortAll(): void {
    for (const calls of this.byQuery.values()) for (const c of calls) c.controller.abort();
  }
}
