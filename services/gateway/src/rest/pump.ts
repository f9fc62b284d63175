/**
 * How REST answers run: each /ask through the runner, as a turn of its conversation (scoped
 * by the API-key client), stopped when the client hangs up or the gateway shuts down.
 */
import type { ServerResponse } from 'node:http';
import { BusError } from '@askbus/bus';
import type { Bus } from '@askbus/bus';
import type { AskRequest, Message } from '@askbus/contracts';
import { clientOf } from '../access';
import { ROUTER, runAsk } from '../ask/runner';
import type { ConversationTurns } from '../conversations/index';
import { failureOf } from '../errors';
import type { Failure } from '../errors';

/** An answer in progress, so that close() can wait for it or cut it off. */
export interface Running {
  stop(): void;
  done: Promise<void>;
}

/** Runs the call's ask on the bus, handing each message on. */
export type Pump = (
  onMessage: (m: Message) => Promise<void> | void,
) => Promise<{ failure?: Failure; clientGone: boolean }>;

export interface PumpDeps {
  bus: Bus;
  turns: ConversationTurns;
  /** The answers in progress (the gateway's close waits for them). */
  running: Set<Running>;
  /** Time limit of one /ask call on the bus (ms). */
  askTimeoutMs: number;
}

/**
 * The pump of one REST request. A client that hangs up aborts the bus stream and cancels the
 * query in every service; `call.request` becomes the request as it ran (the turn's).
 */
export function restPump(
  deps: PumpDeps,
  call: { request: AskRequest },
  traceparent: string | undefined,
  raw: ServerResponse,
): Pump {
  return async (onMessage) => {
    const controller = new AbortController();
    let clientGone = false;
    let shutdown = false;
    let settle!: () => void;
    const entry: Running = {
      stop: () => {
        shutdown = true;
        controller.abort();
      },
      done: new Promise<void>((r) => (settle = r)),
    };
    const onClose = (): void => {
      clientGone = true;
      controller.abort();
    };
    raw.on('close', onClose);
    deps.running.add(entry);
    try {
      // A question naming its conversation runs as its next turn (prev from the earlier ones).
      const run = await runAsk(deps.bus, call.request, {
        timeoutMs: deps.askTimeoutMs,
        signal: controller.signal,
        traceparent,
        turns: deps.turns,
        scope: clientOf(raw.req) ?? '',
        onMessage,
      });
      call.request = run.request;
      if (run.error === undefined || clientGone) return { clientGone };
      if (shutdown) {
        return {
          clientGone,
          failure: failureOf(new BusError('unavailable', 'the gateway is shutting down'), ROUTER),
        };
      }
      return { clientGone, failure: failureOf(run.error, ROUTER) };
    } finally {
      raw.off('close', onClose);
      deps.running.delete(entry);
      settle();
    }
  };
}
