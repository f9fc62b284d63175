import { z } from 'zod';

/** Error codes every bus reply and every protocol rendering understands. */
export const ErrorCode = z.enum([
  'bad_request',
  'not_found',
  'no_responders',
  'timeout',
  'deadline_exceeded',
  'cancelled',
  'unavailable',
  'stream_gap',
  'internal',
]);
export type ErrorCode = z.infer<typeof ErrorCode>;

export const ErrorBody = z.object({ code: ErrorCode, message: z.string() });
export type ErrorBody = z.infer<typeof ErrorBody>;
