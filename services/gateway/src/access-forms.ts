/**
 * Refusals of the access layer (401 no valid key, 429 too many requests or streams) in the form
 * of the protocol that was asked: the gateway's REST error, NLWeb 0.5's Failure, MCP's and A2A's
 * JSON-RPC error, A2A HTTP+JSON's google.rpc.Status.
 */
import { v05Failure } from './v05';
import type { V05ErrorCode } from './v05';

/** The body form of a refusal. */
export type Form = 'rest' | 'v05' | 'mcp' | 'a2a-rpc' | 'a2a-rest';

export type RefusalCode = 'unauthorized' | 'rate_limited' | 'too_many_streams';

export interface Refusal {
  status: 401 | 429;
  code: RefusalCode;
  message: string;
  /** WWW-Authenticate, Retry-After and the RateLimit headers. */
  headers: Record<string, string>;
}

export interface RenderedRefusal {
  contentType: string;
  body: string;
}

const JSON_TYPE = 'application/json; charset=utf-8';

/** google.rpc.Code names and ErrorInfo reasons of A2A's errors. */
const A2A_STATUS: Record<RefusalCode, string> = {
  unauthorized: 'UNAUTHENTICATED',
  rate_limited: 'RESOURCE_EXHAUSTED',
  too_many_streams: 'RESOURCE_EXHAUSTED',
};
const REASON: Record<RefusalCode, string> = {
  unauthorized: 'UNAUTHENTICATED',
  rate_limited: 'RATE_LIMITED',
  too_many_streams: 'TOO_MANY_STREAMS',
};
const V05_CODE: Record<RefusalCode, V05ErrorCode> = {
  unauthorized: 'UNAUTHORIZED',
  rate_limited: 'RATE_LIMITED',
  too_many_streams: 'RATE_LIMITED',
};

const errorInfo = (code: RefusalCode) => ({
  '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
  reason: REASON[code],
  domain: 'askbus',
});

export function renderRefusal(form: Form, r: Refusal): RenderedRefusal {
  switch (form) {
    case 'v05':
      return {
        contentType: JSON_TYPE,
        body: JSON.stringify(v05Failure({}, V05_CODE[r.code], r.message)),
      };
    case 'mcp':
      // -32001 as the MCP plugin has always answered a missing token; -32000 for the limits.
      return {
        contentType: 'application/json',
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: null,
          error: { code: r.status === 401 ? -32001 : -32000, message: r.message },
        }),
      };
    case 'a2a-rpc':
      // -32000: A2A's own codes (-32001…) mean other things (-32001 is TaskNotFound).
      return {
        contentType: 'application/json',
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: null,
          error: { code: -32000, message: r.message, data: [errorInfo(r.code)] },
        }),
      };
    case 'a2a-rest':
      return {
        contentType: 'application/a2a+json',
        body: JSON.stringify({
          error: {
            code: r.status,
            status: A2A_STATUS[r.code],
            message: r.message,
            details: [errorInfo(r.code)],
          },
        }),
      };
    case 'rest':
      return {
        contentType: JSON_TYPE,
        body: JSON.stringify({ message_type: 'error', error: r.message, code: r.code, status: r.status }),
      };
  }
}
