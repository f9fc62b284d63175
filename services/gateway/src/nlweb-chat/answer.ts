/**
 * One chat question on the bus: run as a turn of its conversation (the durable store gives it
 * the earlier questions and keeps its answer), the router's messages handed out as the chat
 * page's frames. A stream the router could not finish still ends the way the page expects:
 * begin (when none came), the error as text, end.
 */
import type { Bus } from '@askbus/bus';
import { createMessageFactory } from '@askbus/contracts';
import type { Message } from '@askbus/contracts';
import { failureOf } from '../errors';
import { ROUTER, runAsk } from '../ask/runner';
import type { ConversationTurns } from '../conversations/index';
import { GenerateHold } from '../pages/generate-hold';
import { chatFrames } from './render';
import type { ChatFrame } from './render';
import type { ChatQuestion } from './protocol';

export interface AnswerDeps {
  bus: Bus;
  turns: ConversationTurns;
  timeoutMs: number;
}

export interface AnswerCall {
  /** The API-key client (conversation scope), '' when keys are off. */
  scope: string;
  question: ChatQuestion;
  traceparent: string | undefined;
  /** Aborted when the client went away or the gateway shuts down: nothing more is sent. */
  signal: AbortSignal;
  emit(frame: ChatFrame): void;
}

export async function answerQuestion(deps: AnswerDeps, call: AnswerCall): Promise<void> {
  const request = call.question.request;
  const stamp = createMessageFactory(request.conversationId, `gateway-${request.queryId}`);
  const hold = new GenerateHold(request.mode);
  let began = false;
  let ended = false;
  const send = (m: Message): void => {
    if (m.message_type === 'begin-nlweb-response') began = true;
    if (m.message_type === 'end-nlweb-response') ended = true;
    for (const x of hold.pass(m)) for (const f of chatFrames(x)) call.emit(f);
  };
  let error: Message | undefined;
  await runAsk(deps.bus, request, {
    timeoutMs: deps.timeoutMs,
    signal: call.signal,
    traceparent: call.traceparent,
    turns: deps.turns,
    scope: call.scope,
    turn: { user: call.question.user },
    onMessage: send,
    // The error the page is shown is kept in the conversation too.
    onFailure: (err) => {
      if (call.signal.aborted) return undefined;
      const f = failureOf(err, ROUTER);
      error = stamp({ message_type: 'error', error: f.error, code: f.code, status: f.status });
      return error;
    },
  });
  if (call.signal.aborted) return;
  if (error) {
    if (!began) send(stamp({ message_type: 'begin-nlweb-response', query: request.query }));
    send(error);
  }
  if (!ended) {
    if (!began) send(stamp({ message_type: 'begin-nlweb-response', query: request.query }));
    send(stamp({ message_type: 'end-nlweb-response' }));
  }
}
