/**
 * One MCP tool call: what the tools share of the server (the bus, the time limits, the log
 * level) and of the request (its trace, its progress token, its cancellation).
 */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { ErrorCode, LoggingLevelSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import type {
  CallToolResult,
  LoggingLevel,
  ServerNotification,
  ServerRequest,
} from '@modelcontextprotocol/sdk/types.js';
import { trace } from '@opentelemetry/api';
import type { Context } from '@opentelemetry/api';
import type { Bus } from '@askbus/bus';
import { traceparentFrom } from '../ask/runner';

export interface McpServerDeps {
  bus: Bus;
  version: string;
  /** Time limit of one tool call on the bus (ms). */
  callTimeoutMs: number;
  /** How long an elicitation may wait for the user (ms). */
  elicitTimeoutMs: number;
  /** Called with each query id a tool starts, and again when it ends (tests, metrics). */
  onQuery?: (queryId: string, state: 'start' | 'end') => void;
}

export type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/**
 * Key under AuthInfo.extra of the OpenTelemetry context active when the MCP HTTP request
 * arrived (the plugin puts it there; the SDK hands authInfo to the tool call as extra.authInfo).
 */
export const OTEL_CONTEXT = 'askbus.otelContext';

/** The HTTP request's context when it holds a recording span (OpenTelemetry on), else undefined. */
export function requestContext(extra: Extra): Context | undefined {
  const ctx = extra.authInfo?.extra?.[OTEL_CONTEXT] as Context | undefined;
  return ctx && trace.getSpan(ctx)?.isRecording() ? ctx : undefined;
}

export const badParams = (message: string): McpError => new McpError(ErrorCode.InvalidParams, message);

export const toolResult = (text: string, structured?: object, isError = false): CallToolResult => ({
  content: [{ type: 'text', text }],
  ...(structured ? { structuredContent: structured as Record<string, unknown> } : {}),
  ...(isError ? { isError: true } : {}),
});

export const seconds = (ms: number): string => `${Number((ms / 1000).toFixed(1))} s`;

const SEVERITY = new Map(LoggingLevelSchema.options.map((l, i) => [l, i]));

/** The server's state the tools share: notifications/message below `minLevel` are not sent. */
export interface McpSession {
  deps: McpServerDeps;
  server: Server;
  minLevel: LoggingLevel;
}

/** A tool call in progress. */
export class ToolCall {
  private step = 0;

  constructor(
    readonly session: McpSession,
    readonly extra: Extra,
  ) {}

  get deps(): McpServerDeps {
    return this.session.deps;
  }

  /**
   * The trace the call's bus calls join, as /ask does it: with a recording span for the HTTP
   * request none (the bus takes the active context, which the tools/call handler sets);
   * otherwise the incoming W3C traceparent when it is valid, else a new trace.
   */
  traceparent(): string | undefined {
    return traceparentFrom(this.extra.requestInfo?.headers.traceparent, requestContext(this.extra));
  }

  async log(level: LoggingLevel, data: unknown): Promise<void> {
    if ((SEVERITY.get(level) ?? 0) < (SEVERITY.get(this.session.minLevel) ?? 0)) return;
    await this.extra
      .sendNotification({ method: 'notifications/message', params: { level, logger: 'askbus', data } })
      .catch(() => undefined);
  }

  /** A progress notification, when the client asked for them (a progress token). */
  async progress(message: string): Promise<void> {
    const progressToken = this.extra._meta?.progressToken;
    if (progressToken === undefined) return;
    await this.extra
      .sendNotification({
        method: 'notifications/progress',
        params: { progressToken, progress: ++this.step, message },
      })
      .catch(() => undefined);
  }

  /** A time limit for one bus call, combined with the client's cancellation of the request. */
  limit(): { signal: AbortSignal; timedOut: () => boolean } {
    const timeout = AbortSignal.timeout(this.deps.callTimeoutMs);
    return { signal: AbortSignal.any([this.extra.signal, timeout]), timedOut: () => timeout.aborted };
  }
}
