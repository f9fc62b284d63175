import { BusError } from '@askbus/bus';
import type { ErrorCode } from '@askbus/contracts';

/** The JSON body of every HTTP 400 the gateway sends. */
export interface BadRequestBody {
  message_type: 'error';
  error: string;
  code: 'bad_request';
  parameter: string;
}

/** Bad input from an HTTP client: always a 400 naming the parameter at fault. */
export class BadRequestError extends Error {
  readonly statusCode = 400;
  constructor(
    readonly parameter: string,
    message: string,
  ) {
    super(message);
    this.name = 'BadRequestError';
  }
  toBody(): BadRequestBody {
    return { message_type: 'error', error: this.message, code: 'bad_request', parameter: this.parameter };
  }
  /** The body to answer with, in the dialect of the request (NLWeb 2025 unless a subclass says). */
  responseBody(): object {
    return this.toBody();
  }
}

/** A failed bus call, as HTTP clients see it. */
export interface Failure {
  code: ErrorCode;
  status: number;
  error: string;
}

/** HTTP status for a bus error code. */
export function httpStatusOf(code: ErrorCode): number {
  switch (code) {
    case 'bad_request':
      return 400;
    case 'not_found':
      return 404;
    case 'no_responders':
    case 'unavailable':
      return 503;
    case 'timeout':
    case 'deadline_exceeded':
      return 504;
    default:
      return 500;
  }
}

/** Turns whatever a bus call threw into a Failure; `what` names the service for the message. */
export function failureOf(err: unknown, what: string): Failure {
  const e = BusError.from(err);
  let error = e.message;
  if (e.code === 'no_responders') error = `${what} is not available (${e.message})`;
  else if (e.code === 'timeout' || e.code === 'deadline_exceeded')
    error = `${what} did not answer in time (${e.message})`;
  return { code: e.code, status: httpStatusOf(e.code), error };
}
