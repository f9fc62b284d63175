import { ErrorBody, type ErrorCode } from '@askbus/contracts';

/** An error that crosses the bus: it has a code the other side can act on. */
export class BusError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'BusError';
  }
  toBody(): ErrorBody {
    return { code: this.code, message: this.message };
  }
  static from(err: unknown): BusError {
    if (err instanceof BusError) return err;
    if (err instanceof Error && err.name === 'AbortError') return new BusError('cancelled', 'cancelled');
    return new BusError('internal', err instanceof Error ? err.message : String(err));
  }
  static fromBody(data: Uint8Array): BusError {
    try {
      const body = ErrorBody.safeParse(JSON.parse(new TextDecoder().decode(data)));
      if (body.success) return new BusError(body.data.code, body.data.message);
    } catch {
      // fall through: an unreadable error body is itself the error
    }
    return new BusError('internal', 'unreadable error reply');
  }
}
