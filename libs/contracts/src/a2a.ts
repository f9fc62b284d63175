/**
 * A2A task events shared between gateway replicas (`a2a.v1.events.<taskId>`): the JSON form
 * (proto3 JSON, as @a2a-js/sdk's toJSON writes it) of the SDK's event objects — Task, Message,
 * TaskStatusUpdateEvent, TaskArtifactUpdateEvent — in an envelope with a sequence number.
 * The schemas check the shape a relaying gateway relies on and keep every other member, so the
 * SDK's own fromJSON still sees the whole object.
 */
import { z } from 'zod';

export const A2A_TASK_STATES = [
  'TASK_STATE_UNSPECIFIED',
  'TASK_STATE_SUBMITTED',
  'TASK_STATE_WORKING',
  'TASK_STATE_COMPLETED',
  'TASK_STATE_FAILED',
  'TASK_STATE_CANCELED',
  'TASK_STATE_INPUT_REQUIRED',
  'TASK_STATE_REJECTED',
  'TASK_STATE_AUTH_REQUIRED',
] as const;

const Id = z.string().min(1).max(1_000);
const A2aPart = z.looseObject({
  text: z.string().optional(),
  data: z.unknown().optional(),
  raw: z.string().optional(),
  url: z.string().optional(),
  mediaType: z.string().optional(),
  filename: z.string().optional(),
});
const A2aMessage = z.looseObject({
  messageId: Id,
  role: z.enum(['ROLE_UNSPECIFIED', 'ROLE_USER', 'ROLE_AGENT']),
  parts: z.array(A2aPart),
  taskId: z.string().optional(),
  contextId: z.string().optional(),
});
const A2aStatus = z.looseObject({
  state: z.enum(A2A_TASK_STATES),
  message: A2aMessage.optional(),
  timestamp: z.string().optional(),
});
const A2aArtifact = z.looseObject({
  artifactId: Id,
  name: z.string().optional(),
  parts: z.array(A2aPart),
});
const A2aTask = z.looseObject({
  id: Id,
  contextId: z.string(),
  status: A2aStatus,
  artifacts: z.array(A2aArtifact).optional(),
  history: z.array(A2aMessage).optional(),
});
const A2aStatusUpdate = z.looseObject({ taskId: Id, contextId: z.string(), status: A2aStatus });
const A2aArtifactUpdate = z.looseObject({
  taskId: Id,
  contextId: z.string(),
  artifact: A2aArtifact,
  append: z.boolean().optional(),
  lastChunk: z.boolean().optional(),
});

/** One SDK execution event (AgentExecutionEvent), its object in JSON form. */
export const A2aExecutionEvent = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('task'), data: A2aTask }),
  z.object({ kind: z.literal('message'), data: A2aMessage }),
  z.object({ kind: z.literal('statusUpdate'), data: A2aStatusUpdate }),
  z.object({ kind: z.literal('artifactUpdate'), data: A2aArtifactUpdate }),
]);
export type A2aExecutionEvent = z.infer<typeof A2aExecutionEvent>;

const EnvelopeHead = {
  taskId: Id,
  /**
   * The event bus that published it (one per task run on one gateway): sequence numbers count
   * per origin, so a task continued on another replica, or after a restart, starts afresh.
   */
  origin: z.string().min(1).max(100),
  /** 0, 1, 2, … per origin; the end marker carries the next number, a heartbeat the one to come. */
  seq: z.number().int().min(0),
};

/**
 * What travels on `a2a.v1.events.<taskId>`: an event; the end of the run that published them;
 * or a heartbeat of a run that is still alive but quiet (a task nobody runs any more sends none).
 */
export const A2aTaskEventEnvelope = z.discriminatedUnion('type', [
  z.object({ type: z.literal('event'), ...EnvelopeHead, event: A2aExecutionEvent }),
  z.object({ type: z.literal('end'), ...EnvelopeHead }),
  z.object({ type: z.literal('alive'), ...EnvelopeHead }),
]);
export type A2aTaskEventEnvelope = z.infer<typeof A2aTaskEventEnvelope>;

/** What travels on `a2a.v1.cancel.<taskId>`: the gateway that runs the task cancels it. */
export const A2aCancelRequest = z.object({ taskId: Id });
export type A2aCancelRequest = z.infer<typeof A2aCancelRequest>;
