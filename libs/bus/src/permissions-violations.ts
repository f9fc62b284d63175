/**
 * NATS permission violations, made visible: the server tells a client "-ERR 'Permissions
 * Violation for Publish to …'" asynchronously and drops the message, so a refused request would
 * otherwise just wait out its deadline. Every violation is logged with its subject, and a call
 * to a refused subject fails at once with a BusError.
 */
import { PermissionViolationError, type NatsConnection } from '@nats-io/nats-core';
import type { BusOptions } from './bus';
import { BusError } from './errors';

type Log = NonNullable<BusOptions['log']>;

/** One call's watch: its signal, the refusal if there was one, and the end of watching. */
export interface PublishWatch {
  signal: AbortSignal;
  refused(): BusError | undefined;
  dispose(): void;
}

/** Watches one connection's status for permission violations (every Bus has one). */
export class PermissionViolations {
  private readonly waiting = new Map<string, Set<(err: BusError) => void>>();

  constructor(nc: NatsConnection, service: string, log: Log) {
    void (async () => {
      for await (const s of nc.status()) {
        if (s.type !== 'error' || !(s.error instanceof PermissionViolationError)) continue;
        const { operation, subject, queue } = s.error;
        const verb = operation === 'publish' ? 'publish' : 'subscribe';
        log('error', `NATS permissions violation: ${service} may not ${verb} to "${subject}"`, {
          operation,
          subject,
          ...(queue ? { queue } : {}),
        });
        if (operation !== 'publish') continue;
        const err = new BusError(
          'internal',
          `NATS refused ${service} publishing to "${subject}" (permissions violation; see the NATS user's permissions)`,
        );
        for (const fail of this.waiting.get(subject) ?? []) fail(err);
      }
    })().catch(() => undefined);
  }

  /**
   * A signal for one call to `subject` that aborts when the server refuses a publish to it,
   * joined with the caller's own signal; `refused` tells which of the two it was.
   */
  watch(subject: string, callerSignal?: AbortSignal): PublishWatch {
    const controller = new AbortController();
    let refused: BusError | undefined;
    const fail = (err: BusError): void => {
      refused = err;
      controller.abort(err);
    };
    let set = this.waiting.get(subject);
    if (!set) this.waiting.set(subject, (set = new Set()));
    set.add(fail);
    // The caller's abort passed on by a listener removed at dispose, not AbortSignal.any: on every
    // call that one made weak references for the garbage collector to clear.
    const passOn = (): void => controller.abort(callerSignal?.reason);
    if (callerSignal?.aborted) passOn();
    else callerSignal?.addEventListener('abort', passOn, { once: true });
    return {
      signal: controller.signal,
      refused: () => refused,
      dispose: () => {
        callerSignal?.removeEventListener('abort', passOn);
        set.delete(fail);
        if (set.size === 0) this.waiting.delete(subject);
      },
    };
  }
}
