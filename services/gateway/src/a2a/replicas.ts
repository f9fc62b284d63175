/**
 * The SDK's ExecutionEventBusManager for gateway replicas that share NATS: a task this gateway
 * runs gets an event bus that also publishes every event on `a2a.v1.events.<taskId>` (then an
 * end marker, and heartbeats while it is quiet); a task it does not run gets a RelayedEventBus
 * that follows those events, so SubscribeToTask and CancelTask work on any replica. A cancel
 * request on `a2a.v1.cancel.<taskId>` reaches the gateway that runs the task, whose executor
 * cancels it as if it had been asked directly.
 */
import { randomUUID } from 'node:crypto';
import { DefaultExecutionEventBus, resolveUserScope } from '@a2a-js/sdk/server';
import type {
  AgentExecutionEvent,
  ExecutionEventBus,
  ExecutionEventBusManager,
  ServerCallContext,
  TaskStore,
} from '@a2a-js/sdk/server';
import type { Bus } from '@askbus/bus';
import { eventContracts } from '@askbus/contracts';
import type { A2aTaskEventEnvelope } from '@askbus/contracts';
import { RelayedEventBus } from './relay';
import { endsStream, toWire } from './task-events';

export interface ReplicaOptions {
  bus: Bus;
  taskStore: TaskStore;
  /** Cancels a task this gateway runs (the executor's cancelTask). */
  cancelLocal: (taskId: string, eventBus: ExecutionEventBus) => Promise<void>;
  /** The signal of the HTTP request being served: a relay ends when its client goes away. */
  requestSignal: () => AbortSignal | undefined;
  /** Heartbeat of a quiet running task (ms), default 5 s; relays give up after 3 missed ones. */
  heartbeatMs?: number;
  /** How long a cancel waits for the gateway running the task to answer (ms), default 1.5 s. */
  cancelAckMs?: number;
  /** …and for its final state (ms), default 10 s. */
  cancelWaitMs?: number;
  warn: (msg: string, fields: Record<string, unknown>) => void;
}

type Envelope = A2aTaskEventEnvelope;

/** The SDK's in-process bus, whose events also go out on NATS with a sequence number. */
class PublishingEventBus extends DefaultExecutionEventBus {
  /** This run's origin: sequence numbers count per origin. */
  readonly origin = randomUUID();
  private seq = 0;
  private ended = false;
  /**
   * Its last state ends a subscriber's stream (terminal, or parked in INPUT_REQUIRED): nothing
   * runs until a next message, so no heartbeats.
   */
  settled = false;
  lastSent = Date.now();

  constructor(
    readonly taskId: string,
    private readonly share: (e: Envelope) => void,
  ) {
    super();
  }

  override publish(event: AgentExecutionEvent): void {
    super.publish(event);
    if (event.kind === 'statusUpdate') this.settled = endsStream(event.data.status?.state);
    if (!this.ended) this.send({ type: 'event', event: toWire(event) });
  }

  override finished(): void {
    super.finished();
    if (this.ended) return;
    this.send({ type: 'end' });
    this.ended = true;
  }

  /** Tells relays the run is alive, and which number comes next (a lost last event shows). */
  beat(): void {
    if (this.ended) return;
    this.share({ type: 'alive', taskId: this.taskId, origin: this.origin, seq: this.seq });
    this.lastSent = Date.now();
  }

  private send(e: { type: 'event'; event: ReturnType<typeof toWire> } | { type: 'end' }): void {
    this.share({ ...e, taskId: this.taskId, origin: this.origin, seq: this.seq++ } as Envelope);
    this.lastSent = Date.now();
  }
}

const scopeKey = (taskId: string, ctx: ServerCallContext | undefined): string =>
  `${ctx?.tenant ?? ''}\0${ctx ? resolveUserScope(ctx) : ''}\0${taskId}`;

export class ReplicatedEventBusManager implements ExecutionEventBusManager {
  private readonly local = new Map<string, PublishingEventBus>();
  private readonly relays = new Set<RelayedEventBus>();
  private readonly cancelSub: ReturnType<Bus['subscribe']>;
  private readonly heartbeat: ReturnType<typeof setInterval>;
  private readonly heartbeatMs: number;

  constructor(private readonly o: ReplicaOptions) {
    this.heartbeatMs = o.heartbeatMs ?? 5_000;
    this.cancelSub = o.bus.subscribe(eventContracts.a2aCancelTask, undefined, ({ taskId }) =>
      this.cancelRequested(taskId),
    );
    this.heartbeat = setInterval(
      () => {
        const due = Date.now() - this.heartbeatMs;
        for (const b of this.local.values()) if (!b.settled && b.lastSent <= due) b.beat();
      },
      Math.max(20, Math.floor(this.heartbeatMs / 2)),
    );
    this.heartbeat.unref();
  }

  createOrGetByTaskId(taskId: string, context?: ServerCallContext): ExecutionEventBus {
    const key = scopeKey(taskId, context);
    let bus = this.local.get(key);
    if (!bus) {
      bus = new PublishingEventBus(taskId, (e) => this.share(e));
      this.local.set(key, bus);
    }
    return bus;
  }

  /** The local bus of a task this gateway runs, else a relay of the gateway that runs it. */
  getByTaskId(taskId: string, context?: ServerCallContext): ExecutionEventBus | undefined {
    const own = this.local.get(scopeKey(taskId, context));
    if (own) return own;
    const relay = new RelayedEventBus(taskId, {
      bus: this.o.bus,
      taskStore: this.o.taskStore,
      context,
      signal: this.o.requestSignal(),
      onClose: (r) => this.relays.delete(r),
      orphanMs: 3 * this.heartbeatMs,
      cancelAckMs: this.o.cancelAckMs ?? 1_500,
      cancelWaitMs: this.o.cancelWaitMs ?? 10_000,
      warn: this.o.warn,
    });
    if (!relay.isClosed) this.relays.add(relay);
    return relay;
  }

  cleanupByTaskId(taskId: string, context?: ServerCallContext): void {
    const key = scopeKey(taskId, context);
    this.local.get(key)?.removeAllListeners();
    this.local.delete(key);
  }

  /** How many relays follow tasks of other gateways now (tests, metrics). */
  get relaying(): number {
    return this.relays.size;
  }

  /** Gateway shutdown: relays end, cancel requests and heartbeats stop. */
  close(): void {
    clearInterval(this.heartbeat);
    if (!this.o.bus.nc.isClosed()) this.cancelSub.unsubscribe();
    for (const relay of this.relays) relay.end();
  }

  private share(e: Envelope): void {
    try {
      this.o.bus.publish(eventContracts.a2aTaskEvents, e.taskId, e);
    } catch (err) {
      // Replicas then miss this event (their relays resync on the gap); the task runs on.
      this.o.warn('A2A: a task event could not be shared', { taskId: e.taskId, err });
    }
  }

  private cancelRequested(taskId: string): void {
    for (const b of this.local.values()) {
      if (b.taskId !== taskId) continue;
      // An answer to the asking gateway's relay, which otherwise cancels on its own.
      b.beat();
      this.o
        .cancelLocal(taskId, b)
        .catch((err: unknown) => this.o.warn('A2A: a cancel request failed', { taskId, err }));
    }
  }
}
