/**
 * The SDK event bus of a task that another gateway runs: it relays that gateway's events from
 * `a2a.v1.events.<taskId>` to the SDK (resubscribe's event queue), in order, and ends where the
 * SDK's own queue ends (a terminal state or INPUT_REQUIRED), when the run ends, when nobody runs
 * the task any more, or when the client goes away.
 *
 * Sequence numbers count per origin (one run on one gateway): a duplicate is dropped; a gap (a
 * message NATS dropped) makes the relay read the task from the store and send it as a snapshot.
 * At the very start the store's snapshot (sent by the SDK) may already hold an event the relay
 * also passes on: the relay subscribes before the snapshot is read, so nothing is lost.
 */
import { AgentEvent, DefaultExecutionEventBus } from '@a2a-js/sdk/server';
import type {
  AgentExecutionEvent,
  EventListener,
  ExecutionEventName,
  FinishedListener,
  ServerCallContext,
  TaskStore,
} from '@a2a-js/sdk/server';
import { TaskState } from '@a2a-js/sdk';
import type { Task } from '@a2a-js/sdk';
import type { Bus } from '@askbus/bus';
import { eventContracts } from '@askbus/contracts';
import type { A2aTaskEventEnvelope } from '@askbus/contracts';
import { endsStream, fromWire, isTerminal } from './task-events';

type Subscription = ReturnType<Bus['subscribe']>;

export interface RelayOptions {
  bus: Bus;
  taskStore: TaskStore;
  context: ServerCallContext | undefined;
  /** Ends the relay when the client goes away. */
  signal: AbortSignal | undefined;
  /** Told when the relay stops listening. */
  onClose?: (relay: RelayedEventBus) => void;
  /** Nothing heard (not even a heartbeat) for this long: nobody runs the task any more. */
  orphanMs: number;
  /** A cancel waits this long for a sign of the running gateway, then cancels here. */
  cancelAckMs: number;
  /** …and this long for that gateway's final state. */
  cancelWaitMs: number;
  warn: (msg: string, fields: Record<string, unknown>) => void;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A status update that states what the stored task's status is. */
const statusOf = (t: Task): AgentExecutionEvent =>
  AgentEvent.statusUpdate({ taskId: t.id, contextId: t.contextId, status: t.status, metadata: undefined });

export class RelayedEventBus extends DefaultExecutionEventBus {
  private readonly sub: Subscription;
  /** The next sequence number expected, per origin. */
  private readonly expected = new Map<string, number>();
  /** Envelopes are handled one at a time, in arrival order (a resync reads the store). */
  private chain: Promise<void> = Promise.resolve();
  private orphanTimer: ReturnType<typeof setTimeout> | undefined;
  private closed = false;
  /** Set while a cancel waits: events are not passed on; heard and final report to it. */
  private cancel: { heard(): void; final(e: AgentExecutionEvent | undefined): void } | undefined;

  constructor(
    readonly taskId: string,
    private readonly o: RelayOptions,
  ) {
    super();
    this.sub = o.bus.subscribe(eventContracts.a2aTaskEvents, taskId, (env) => {
      if (env.taskId !== taskId) return;
      this.chain = this.chain
        .then(() => this.receive(env))
        .catch((err: unknown) => o.warn('A2A relay: an event was not passed on', { taskId, err }));
    });
    if (o.signal?.aborted) this.end();
    else o.signal?.addEventListener('abort', this.end, { once: true });
    this.armOrphanTimer();
  }

  /**
   * Asks the gateway running the task to cancel it, and passes on its final state once that
   * gateway saved it. False when no gateway answered (or the run ended without a final state):
   * the caller then cancels the task here.
   */
  async cancelRemote(): Promise<boolean> {
    let heard = false;
    const timers: ReturnType<typeof setTimeout>[] = [];
    const final = new Promise<AgentExecutionEvent | undefined>((resolve) => {
      const settle = (e: AgentExecutionEvent | undefined): void => {
        timers.forEach(clearTimeout);
        resolve(e);
      };
      timers.push(
        setTimeout(() => !heard && settle(undefined), this.o.cancelAckMs),
        setTimeout(() => settle(undefined), this.o.cancelWaitMs),
      );
      this.cancel = { heard: () => (heard = true), final: settle };
    });
    this.o.bus.publish(eventContracts.a2aCancelTask, this.taskId, { taskId: this.taskId });
    const event = await final;
    if (event === undefined) return false;
    // The running gateway saves its final state just after it sends it; what this gateway then
    // saves (the SDK saves what the relay passes on) must agree with it, not overwrite it.
    const until = Date.now() + this.o.cancelWaitMs;
    while (Date.now() < until && !this.closed) {
      const stored = await this.load();
      const state = stored?.status?.state;
      if (stored && isTerminal(state)) {
        super.publish(statusOf(stored));
        this.close();
        return true;
      }
      // A parked task: no request on that gateway follows it, so nobody there saves the state.
      if (state === TaskState.TASK_STATE_INPUT_REQUIRED || state === TaskState.TASK_STATE_AUTH_REQUIRED)
        break;
      await sleep(25);
    }
    super.publish(event);
    this.close();
    return true;
  }

  /** True once the relay stopped listening. */
  get isClosed(): boolean {
    return this.closed;
  }

  override off(eventName: 'event', listener: EventListener): this;
  override off(eventName: 'finished', listener: FinishedListener): this;
  override off(eventName: ExecutionEventName, listener: EventListener | FinishedListener): this {
    if (eventName === 'event') {
      super.off('event', listener as EventListener);
      // The SDK's queue stopped listening: nobody reads this relay any more.
      this.close();
    } else super.off('finished', listener as FinishedListener);
    return this;
  }

  override removeAllListeners(eventName?: ExecutionEventName): this {
    super.removeAllListeners(eventName);
    this.close();
    return this;
  }

  private async receive(env: A2aTaskEventEnvelope): Promise<void> {
    if (this.closed) return;
    this.armOrphanTimer();
    this.cancel?.heard();
    const expected = this.expected.get(env.origin);
    if (expected !== undefined && env.seq < expected) return; // a duplicate
    this.expected.set(env.origin, env.type === 'alive' ? env.seq : env.seq + 1);
    if (expected !== undefined && env.seq > expected) {
      this.o.warn('A2A relay: events were lost; sending the stored task', {
        taskId: this.taskId,
        expected,
        got: env.seq,
      });
      const snapshot = await this.load();
      if (snapshot && !this.cancel && !this.closed) super.publish(AgentEvent.task(snapshot));
    }
    if (this.closed) return;
    if (env.type === 'event') this.deliver(fromWire(env.event));
    else if (env.type === 'end') await this.runEnded();
  }

  private deliver(e: AgentExecutionEvent): void {
    const ends = e.kind === 'statusUpdate' && endsStream(e.data.status?.state);
    if (this.cancel) {
      if (e.kind === 'statusUpdate' && isTerminal(e.data.status?.state)) this.cancel.final(e);
      return;
    }
    super.publish(e);
    // The SDK's queue ends on this event itself; the relay stops listening.
    if (ends) this.close();
  }

  /** The run ended without a state that ends the stream (or its last one was lost): ask the store. */
  private async runEnded(): Promise<void> {
    const stored = await this.load();
    const final = stored && endsStream(stored.status?.state) ? statusOf(stored) : undefined;
    if (this.cancel) this.cancel.final(final && isTerminal(stored?.status?.state) ? final : undefined);
    else if (final) this.deliver(final);
    else this.end();
  }

  private armOrphanTimer(): void {
    clearTimeout(this.orphanTimer);
    if (this.closed) return;
    this.orphanTimer = setTimeout(() => {
      this.chain = this.chain.then(async () => {
        if (this.closed || this.cancel) return;
        this.o.warn('A2A relay: no gateway runs this task any more', { taskId: this.taskId });
        await this.runEnded();
      });
    }, this.o.orphanMs);
  }

  private async load(): Promise<Task | undefined> {
    try {
      return await this.o.taskStore.load(this.taskId, this.o.context!);
    } catch (err) {
      this.o.warn('A2A relay: the task could not be read', { taskId: this.taskId, err });
      return undefined;
    }
  }

  /** Ends the consumer's stream (the SDK's queue stops on `finished`) and stops listening. */
  readonly end = (): void => {
    if (this.closed) return;
    this.close();
    super.finished();
  };

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.orphanTimer);
    this.o.signal?.removeEventListener('abort', this.end);
    if (!this.o.bus.nc.isClosed()) this.sub.unsubscribe();
    this.o.onClose?.(this);
  }
}
