/**
 * One chat question on the bus: run as a turn of its conversation (the durable store gives it
 * the earlier questions and keeps its answer), the router's messages handed out as the chat
 * page's frames. A stream the router could not finish still ends the way the page expects:
 * begin (when none came), the error as text, end.
 */
import type { Bus } from '@askbus/bus';
import { contracts, createMessageFactory } from '@askbus/contracts';
import type { Message } from '@askbus/contracts';
import { failureOf } from '../errors';
import type { ConversationTurns } from '../conversations/index';
import { GenerateHold } from '../pages/generate-hold';
import { chatFrames } from './render';
import type { ChatFrame } from './render';
import type { ChatQuestion } from './protocol';

const ROUTER = 'the askbus router';

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
  const turn = await deps.turns.start(call.scope, call.question.request, { user: call.question.user });
  const { request } = turn;
  const stamp = createMessageFactory(request.conversationId, `gateway-${request.queryId}`);
  const hold = new GenerateHold(request.mode);
  let began = false;
  let ended = false;
  const send = (m: Message): void => {
    if (m.message_type === 'begin-nlweb-response') began = true;
    if (m.message_type === 'end-nlweb-response') ended = true;
    for (const x of hold.pass(m)) for (const f of chatFrames(x)) call.emit(f);
  };
  try {
    const stream = deps.bus.stream(contracts.ask, request, {
      queryId: request.queryId,
      signal: call.signal,
      timeoutMs: deps.timeoutMs,
      ...(call.traceparent ? { traceparent: call.traceparent } : {}),
    });
    for await (const m of stream) {
      turn.add(m);
      send(m);
    }
  } catch (err) {
    if (call.signal.aborted) return;
    const f = failureOf(err, ROUTER);
    if (!began) send(stamp({ message_type: 'begin-nlweb-response', query: request.query }));
    const error = stamp({ message_type: 'error', error: f.error, code: f.code, status: f.status });
    turn.add(error);
    send(error);
  } finally {
    if (!ended && !call.signal.aborted) {
      if (!began) send(stamp({ message_type: 'begin-nlweb-response', query: request.query }));
      send(stamp({ message_type: 'end-nlweb-response' }));
    }
    void turn.end();
  }
}
