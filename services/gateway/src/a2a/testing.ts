/** Helpers of the A2A tests: messages, SDK clients over either binding, a webhook receiver. */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  ClientFactory,
  ClientFactoryOptions,
  JsonRpcTransportFactory,
  RestTransportFactory,
} from '@a2a-js/sdk/client';
import type { Client } from '@a2a-js/sdk/client';
import { Role } from '@a2a-js/sdk';
import type { Message, Part, SendMessageRequest, StreamResponse, Task } from '@a2a-js/sdk';

export type Binding = 'JSONRPC' | 'HTTP+JSON';

/** An SDK client from the agent card at `base`, preferring `binding`. */
export async function clientFor(base: string, binding: Binding, fetchImpl?: typeof fetch): Promise<Client> {
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [
        new JsonRpcTransportFactory(fetchImpl ? { fetchImpl } : undefined),
        new RestTransportFactory(fetchImpl ? { fetchImpl } : undefined),
      ],
      preferredTransports: [binding],
    }),
  );
  return factory.createFromUrl(base);
}

export const text = (value: string): Part => ({
  content: { $case: 'text', value },
  metadata: undefined,
  filename: '',
  mediaType: 'text/plain',
});
export const data = (value: unknown): Part => ({
  content: { $case: 'data', value },
  metadata: undefined,
  filename: '',
  mediaType: 'application/json',
});

export function userMessage(parts: Part[] | string, extra: Partial<Message> = {}): Message {
  return {
    messageId: randomUUID(),
    contextId: '',
    taskId: '',
    role: Role.ROLE_USER,
    parts: typeof parts === 'string' ? [text(parts)] : parts,
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
    ...extra,
  };
}

export function sendRequest(
  message: Message,
  configuration: Partial<NonNullable<SendMessageRequest['configuration']>> = {},
): SendMessageRequest {
  return {
    tenant: '',
    message,
    configuration: {
      acceptedOutputModes: [],
      taskPushNotificationConfig: undefined,
      returnImmediately: false,
      ...configuration,
    },
    metadata: undefined,
  };
}

export function asTask(r: Message | Task): Task {
  if (!('status' in r)) throw new Error(`expected a task, got ${JSON.stringify(r)}`);
  return r;
}

/** Collects a stream's events until it ends. */
export async function collect(stream: AsyncGenerator<StreamResponse>): Promise<StreamResponse[]> {
  const out: StreamResponse[] = [];
  for await (const e of stream) out.push(e);
  return out;
}

export interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A webhook receiver on 127.0.0.1; `failFirst` answers 503 that many times first. */
export async function webhookReceiver(failFirst = 0): Promise<{
  url: string;
  received: Received[];
  attempts: () => number;
  close(): Promise<void>;
}> {
  const received: Received[] = [];
  let attempts = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      attempts++;
      if (attempts <= failFirst) {
        res.writeHead(503).end();
        return;
      }
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    attempts: () => attempts,
    close: () => new Promise((r) => server.close(() => r())),
  };
}
