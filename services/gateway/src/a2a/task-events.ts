/**
 * The SDK's execution events as they travel between gateway replicas: each object in its JSON
 * form (the SDK's own toJSON / fromJSON), and which task states end a relay.
 */
import { Message, Task, TaskArtifactUpdateEvent, TaskState, TaskStatusUpdateEvent } from '@a2a-js/sdk';
import { AgentEvent } from '@a2a-js/sdk/server';
import type { AgentExecutionEvent } from '@a2a-js/sdk/server';
import type { A2aExecutionEvent } from '@askbus/contracts';

export function toWire(e: AgentExecutionEvent): A2aExecutionEvent {
  switch (e.kind) {
    case 'task':
      return { kind: 'task', data: Task.toJSON(e.data) } as A2aExecutionEvent;
    case 'message':
      return { kind: 'message', data: Message.toJSON(e.data) } as A2aExecutionEvent;
    case 'statusUpdate':
      return { kind: 'statusUpdate', data: TaskStatusUpdateEvent.toJSON(e.data) } as A2aExecutionEvent;
    case 'artifactUpdate':
      return { kind: 'artifactUpdate', data: TaskArtifactUpdateEvent.toJSON(e.data) } as A2aExecutionEvent;
  }
}

export function fromWire(e: A2aExecutionEvent): AgentExecutionEvent {
  switch (e.kind) {
    case 'task':
      return AgentEvent.task(Task.fromJSON(e.data));
    case 'message':
      return AgentEvent.message(Message.fromJSON(e.data));
    case 'statusUpdate':
      return AgentEvent.statusUpdate(TaskStatusUpdateEvent.fromJSON(e.data));
    case 'artifactUpdate':
      return AgentEvent.artifactUpdate(TaskArtifactUpdateEvent.fromJSON(e.data));
  }
}

const TERMINAL = new Set<TaskState>([
  TaskState.TASK_STATE_COMPLETED,
  TaskState.TASK_STATE_FAILED,
  TaskState.TASK_STATE_CANCELED,
  TaskState.TASK_STATE_REJECTED,
]);

export const isTerminal = (state: TaskState | undefined): boolean =>
  state !== undefined && TERMINAL.has(state);

/**
 * States after which a subscriber's stream ends, as the SDK's ExecutionEventQueue ends it:
 * terminal ones and INPUT_REQUIRED (the task waits for the user's next message).
 */
export const endsStream = (state: TaskState | undefined): boolean =>
  isTerminal(state) || state === TaskState.TASK_STATE_INPUT_REQUIRED;

/** The task state an event sets, if it sets one. */
export function stateOf(e: AgentExecutionEvent): TaskState | undefined {
  if (e.kind === 'statusUpdate') return e.data.status?.state;
  if (e.kind === 'task') return e.data.status?.state;
  return undefined;
}
