/**
 * Requests Node's HTTP parser refuses before any route sees them (a control character in a
 * header, a header block over the size limit, a broken request line): answered, as every other
 * refusal of the gateway, in the error form of the surface the request was sent to, read from
 * the request line of the raw bytes. Fastify's default answers `{"error":"Bad Request",
 * "message":"Client Error"}` on every path.
 */
import { STATUS_CODES } from 'node:http';
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { ConnectionError } from 'fastify';
import { RequestMalformedError, toRestErrorBody } from '@a2a-js/sdk/errors';
import { REST_PATH } from './a2a/card';

/** What Node's parser says went wrong, in words a client can act on. */
function reasonOf(code: string | undefined): { status: number; message: string } {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return { status: 431, message: 'the request headers are larger than the server accepts' };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, message: 'the request did not arrive in time' };
    case 'HPE_INVALID_HEADER_TOKEN':
      return {
        status: 400,
        message: 'a request header has a character HTTP does not allow (a control character?)',
      };
    case 'HPE_INVALID_METHOD':
      return { status: 400, message: 'the request method is not valid HTTP' };
    case 'HPE_INVALID_URL':
      return { status: 400, message: 'the request target is not a valid URL' };
    default:
      return { status: 400, message: `the request is not valid HTTP (${code ?? 'unknown error'})` };
  }
}

/** The path of the request line at the start of the raw bytes, if it can be read. */
export function requestPathOf(raw: Buffer | undefined): string {
  if (!raw) return '';
  const line = raw.subarray(0, 8192).toString('latin1').split(/\r?\n/, 1)[0] ?? '';
  const target = /^[A-Za-z]+ +(\S+)/.exec(line)?.[1] ?? '';
  return target.replace(/^https?:\/\/[^/]*/i, '').split('?', 1)[0] ?? '';
}

const under = (path: string, base: string): boolean => path === base || path.startsWith(`${base}/`);

/** The content type and body of a refusal at `path`, in that surface's own form. */
export function clientErrorAnswer(
  path: string,
  status: number,
  message: string,
): { type: string; body: string } {
  if (under(path, REST_PATH)) {
    return {
      type: 'application/a2a+json',
      body: JSON.stringify(toRestErrorBody(new RequestMalformedError(message), status)),
    };
  }
  if (under(path, '/a2a') || under(path, '/mcp')) {
    return {
      type: 'application/json',
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32600, message: `Invalid Request: ${message}` },
      }),
    };
  }
  if (under(path, '/chat')) {
    return {
      type: 'application/json',
      body: JSON.stringify({ type: 'error', error: 'invalid_request', message, code: status }),
    };
  }
  return {
    type: 'application/json',
    body: JSON.stringify({
      message_type: 'error',
      error: message,
      code: 'bad_request',
      parameter: 'request',
    }),
  };
}

/** Fastify's `clientErrorHandler`: the answer in the surface's form, then the socket closes. */
export function clientErrorHandler(err: ConnectionError, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  // Bytes after a request that said `Connection: close`, while its answer is still being written:
  // that answer goes out first, then the connection closes (Node's parser reads nothing more).
  const answering = (socket as Socket & { _httpMessage?: ServerResponse })._httpMessage;
  if (answering && !answering.writableFinished) {
    const close = (): void => void socket.destroy();
    answering.once('finish', close);
    answering.once('close', close);
    return;
  }
  const { status, message } = reasonOf(err.code);
  // Typed as a Buffer's JSON; Node hands the Buffer itself.
  const raw: unknown = err.rawPacket;
  const path = requestPathOf(Buffer.isBuffer(raw) ? raw : undefined);
  const { type, body } = clientErrorAnswer(path, status, message);
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\nConnection: close\r\n` +
        `Content-Type: ${type}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  }
  socket.destroy(err);
}
