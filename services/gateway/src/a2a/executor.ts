/**
 * The A2A agent: each task runs one skill over the bus. `ask` streams the router's messages as
 * artifact updates (results as JSON data parts, the summary and a final text answer), progress
 * as WORKING status updates, and parks the task in INPUT_REQUIRED when the router asks the user
 * something; the next message in the task is the answer, run as the next turn. Cancelling a task
 * cancels its query in every service (bus.cancel); a task another gateway runs is cancelled there
 * (RelayedEventBus.cancelRemote).
 */
import { randomUUID } from 'node:crypto';
import { AgentEvent } from '@a2a-js/sdk/server';
import type { AgentExecutor, ExecutionEventBus, RequestContext } from '@a2a-js/sdk/server';
import { Role, TaskState } from '@a2a-js/sdk';
import type { Artifact, Message as A2AMessage, Part, Task } from '@a2a-js/sdk';
import type { Bus } from '@askbus/bus';
import { contracts } from '@askbus/contracts';
import type { AskRequest, ResultItem } from '@askbus/contracts';
import { failureOf } from '../errors';
import { conversationTurns } from '../conversations/index';
import type { ConversationTurns, TurnOptions } from '../conversations/index';
import { AnswerFold } from '../ask/fold';
import { RETRIEVER, ROUTER, askRequest, runAsk, traceparentFrom } from '../ask/runner';
import { AskArgs, WhoArgs, issueText, renderAsk, renderSites, renderWho } from '../ask/skills';
import type { WhoOutput } from '../ask/skills';
import { rankSites, whoFailure } from '../ask/who';
import { RelayedEventBus } from './relay';

export const SKILLS = ['ask', 'list_sites', 'who'] as const;
export type SkillId = (typeof SKILLS)[number];

export interface ExecutorDeps {
  bus: Bus;
  /** Time limit of one skill run on the bus (ms). */
  callTimeoutMs: number;
  /** Called with each query id a task starts, and when it ends (tests, metrics). */
  onQuery?: (queryId: string, state: 'start' | 'end', taskId: string) => void;
  /** Told when the conversation store fails (the question then runs without its history). */
  warn?: (err: unknown, msg: string) => void;
}

const now = (): string => new Date().toISOString();
const textPart = (text: string, mediaType = 'text/plain'): Part => ({
  content: { $case: 'text', value: text },
  metadata: undefined,
  filename: '',
  mediaType,
});
const dataPart = (data: unknown): Part => ({
  content: { $case: 'data', value: data },
  metadata: undefined,
  filename: '',
  mediaType: 'application/json',
});

function agentMessage(taskId: string, contextId: string, text: string): A2AMessage {
  return {
    messageId: randomUUID(),
    contextId,
    taskId,
    role: Role.ROLE_AGENT,
    parts: [textPart(text)],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

/** The text and the options (data parts, metadata) of a user message. */
export function readMessage(m: A2AMessage): { text: string; options: Record<string, unknown> } {
  const texts: string[] = [];
  const options: Record<string, unknown> = {};
  for (const p of m.parts) {
    if (p.content?.$case === 'text') texts.push(p.content.value);
    else if (p.content?.$case === 'data' && p.content.value && typeof p.content.value === 'object') {
      Object.assign(options, p.content.value as Record<string, unknown>);
    }
  }
  const skill = (m.metadata as Record<string, unknown> | undefined)?.skill;
  if (typeof skill === 'string' && options.skill === undefined) options.skill = skill;
  return { text: texts.join('\n').trim(), options };
}

/** Queries the user sent earlier in this task (oldest first), for `prev`. */
function earlierQueries(task: Task | undefined, current: string): string[] {
  if (!task) return [];
  const out = task.history
    .filter((m) => m.role === Role.ROLE_USER)
    .map((m) => readMessage(m).text)
    .filter(Boolean);
  if (out[out.length - 1] === current) out.pop();
  return out.slice(-50);
}

interface Running {
  controller: AbortController;
  queryIds: Set<string>;
  cancelled: boolean;
}

/** Remembers the context of recent tasks, so that a cancel event carries it. */
const CONTEXTS_KEPT = 10_000;

export class AskExecutor implements AgentExecutor {
  private readonly running = new Map<string, Running>();
  private readonly contexts = new Map<string, string>();
  private stopping = false;
  /** A contextId is a conversation of the store /ask and the chat API share. */
  private readonly turns: ConversationTurns;

  constructor(private readonly deps: ExecutorDeps) {
    this.turns = conversationTurns(deps.bus, deps.warn ?? (() => undefined));
  }

  /** Stops every running task (gateway shutdown); their queries are cancelled. */
  stopAll(): void {
    this.stopping = true;
    for (const r of this.running.values()) {
      r.controller.abort();
      for (const q of r.queryIds) this.deps.bus.cancel(q);
    }
  }

  async cancelTask(taskId: string, eventBus: ExecutionEventBus): Promise<void> {
    const r = this.running.get(taskId);
    if (r) {
      r.cancelled = true;
      r.controller.abort();
      for (const q of r.queryIds) this.deps.bus.cancel(q);
    } else if (eventBus instanceof RelayedEventBus && (await eventBus.cancelRemote())) {
      // Another gateway runs the task: it cancelled it, and the relay passed its final state on.
      return;
    }
    eventBus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId: this.contexts.get(taskId) ?? '',
        status: { state: TaskState.TASK_STATE_CANCELED, message: undefined, timestamp: now() },
        metadata: undefined,
      }),
    );
  }

  async execute(ctx: RequestContext, eventBus: ExecutionEventBus): Promise<void> {
    const { taskId, contextId } = ctx;
    this.contexts.delete(taskId);
    this.contexts.set(taskId, contextId);
    if (this.contexts.size > CONTEXTS_KEPT) {
      const oldest = this.contexts.keys().next().value;
      if (oldest !== undefined) this.contexts.delete(oldest);
    }
    const user = ctx.userMessage;
    const { text, options } = readMessage(user);
    const parked = ctx.task?.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED;
    const skill = (parked ? 'ask' : (options.skill ?? 'ask')) as string;

    const task: Task = ctx.task ?? {
      id: taskId,
      contextId,
      status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: now() },
      artifacts: [],
      history: [user],
      metadata: { skill },
    };
    eventBus.publish(AgentEvent.task(task));

    const status = (state: TaskState, message?: string, metadata?: Record<string, unknown>): void =>
      eventBus.publish(
        AgentEvent.statusUpdate({
          taskId,
          contextId,
          status: {
            state,
            message: message === undefined ? undefined : agentMessage(taskId, contextId, message),
            timestamp: now(),
          },
          metadata,
        }),
      );
    const artifact = (
      a: Omit<Artifact, 'metadata' | 'extensions' | 'description'>,
      append = false,
      last = false,
    ): void =>
      eventBus.publish(
        AgentEvent.artifactUpdate({
          taskId,
          contextId,
          artifact: { description: '', metadata: undefined, extensions: [], ...a },
          append,
          lastChunk: last,
          metadata: undefined,
        }),
      );

    if (!(SKILLS as readonly string[]).includes(skill)) {
      status(TaskState.TASK_STATE_REJECTED, `Unknown skill "${skill}"; this agent has ${SKILLS.join(', ')}.`);
      return;
    }

    const run: Running = { controller: new AbortController(), queryIds: new Set(), cancelled: false };
    this.running.set(taskId, run);
    const timer = setTimeout(() => run.controller.abort(), this.deps.callTimeoutMs);
    const traceparent = traceOf(ctx);
    try {
      status(TaskState.TASK_STATE_WORKING);
      // list_sites and who: one answer, as data and as text.
      if (skill !== 'ask') {
        const opts = { signal: run.controller.signal, timeoutMs: this.deps.callTimeoutMs, traceparent };
        let data: object, textOut: string, done: string;
        if (skill === 'list_sites') {
          const { sites } = await this.deps.bus.request(contracts.sites, {}, opts);
          [data, textOut, done] = [{ sites }, renderSites({ sites }), `${sites.length} sites`];
        } else {
          const args = WhoArgs.safeParse({ ...options, query: text });
          if (!args.success) {
            status(TaskState.TASK_STATE_REJECTED, `Invalid request for who: ${issueText(args.error)}`);
            return;
          }
          // The router's who tool, as /who and MCP's who (ask/who.ts).
          const { query, max_sites: maxSites = 10 } = args.data;
          const out: WhoOutput = { query, sites: await rankSites(this.deps.bus, { query, maxSites }, opts) };
          [data, textOut, done] = [out, renderWho(out), `${out.sites.length} sites can answer`];
        }
        artifact(
          { artifactId: 'sites', name: 'sites', parts: [dataPart(data), textPart(textOut)] },
          false,
          true,
        );
        status(TaskState.TASK_STATE_COMPLETED, done);
        return;
      }
      const args = AskArgs.safeParse({ ...options, query: text });
      if (!args.success) {
        status(TaskState.TASK_STATE_REJECTED, `Invalid request for ask: ${issueText(args.error)}`);
        return;
      }
      const request = askRequest({
        query: args.data.query,
        site: args.data.site,
        // An explicit prev wins; else the conversation's earlier questions (the turn's).
        prev: args.data.prev,
        mode: args.data.mode ?? args.data.generate_mode,
        maxResults: args.data.max_results,
        conversationId: contextId.slice(0, 200),
      });
      if (!request.success) {
        status(TaskState.TASK_STATE_REJECTED, `Invalid request for ask: ${issueText(request.error)}`);
        return;
      }
      const user = ctx.context.user;
      await this.ask(
        request.data,
        user?.isAuthenticated ? user.userName : '',
        { fallbackPrev: earlierQueries(ctx.task, args.data.query) },
        run,
        traceparent,
        status,
        artifact,
      );
    } catch (err) {
      if (run.cancelled) return;
      const reason = this.stopping
        ? 'the gateway shut down while it ran; send the message again'
        : run.controller.signal.aborted
          ? `did not finish within ${Number((this.deps.callTimeoutMs / 1000).toFixed(1))} s and was stopped`
          : skill === 'who'
            ? whoFailure(err).error
            : failureOf(err, skill === 'ask' ? ROUTER : RETRIEVER).error;
      status(TaskState.TASK_STATE_FAILED, `The ${skill} request failed: ${reason}`);
    } finally {
      clearTimeout(timer);
      this.running.delete(taskId);
    }
  }

  private async ask(
    asked: AskRequest,
    scope: string,
    turn: TurnOptions,
    run: Running,
    traceparent: string | undefined,
    status: (state: TaskState, message?: string, metadata?: Record<string, unknown>) => void,
    artifact: (
      a: Omit<Artifact, 'metadata' | 'extensions' | 'description'>,
      append?: boolean,
      last?: boolean,
    ) => void,
  ): Promise<void> {
    // The turn's request differs only in its prev: the answer is the same.
    const request = asked;
    const fold = new AnswerFold(asked);
    let resultChunks = 0;
    const results = (fresh: ResultItem[]): void => {
      if (fresh.length === 0) return;
      artifact(
        { artifactId: 'results', name: 'results', parts: fresh.map((i) => dataPart(i)) },
        resultChunks++ > 0,
      );
    };
    const { onQuery } = this.deps;
    const ran = await runAsk(this.deps.bus, asked, {
      timeoutMs: this.deps.callTimeoutMs,
      signal: run.controller.signal,
      traceparent,
      turns: this.turns,
      scope,
      turn,
      onQuery: (queryId, state) => {
        if (state === 'start') {
          // The turn's request (its prev from the conversation) is the one that runs.
          run.queryIds.add(queryId);
          onQuery?.(queryId, 'start', '');
          status(TaskState.TASK_STATE_WORKING, undefined, { queryId });
        } else onQuery?.(queryId, 'end', '');
      },
      onMessage: (m) => {
        const step = fold.add(m);
        switch (step.kind) {
          case 'results':
            return results(step.fresh);
          case 'summary':
            return artifact(
              { artifactId: 'summary', name: 'summary', parts: [textPart(step.text, 'text/markdown')] },
              false,
              true,
            );
          case 'answer':
            artifact(
              {
                artifactId: 'generated',
                name: 'generated answer',
                parts: [textPart(step.text, 'text/markdown')],
              },
              false,
              true,
            );
            return results(step.fresh);
          case 'note':
            return status(TaskState.TASK_STATE_WORKING, step.text, { queryId: request.queryId });
          default:
            return;
        }
      },
    });
    if (ran.error !== undefined) throw ran.error;
    const out = fold.answer;
    if (out.ask_user && out.results.length === 0) {
      status(TaskState.TASK_STATE_INPUT_REQUIRED, out.ask_user, { queryId: request.queryId });
      return;
    }
    artifact(
      { artifactId: 'answer', name: 'answer', parts: [textPart(renderAsk(out), 'text/markdown')] },
      false,
      true,
    );
    status(
      TaskState.TASK_STATE_COMPLETED,
      `${out.results.length} result${out.results.length === 1 ? '' : 's'} for "${out.query}"`,
      { queryId: request.queryId },
    );
  }
}

/** The trace of the task's bus calls: the request's traceparent (runner.ts traceparentFrom). */
function traceOf(ctx: RequestContext): string | undefined {
  const headers = ctx.context.state.get('headers') as
    Record<string, string | string[] | undefined> | undefined;
  return traceparentFrom(headers?.traceparent);
}
