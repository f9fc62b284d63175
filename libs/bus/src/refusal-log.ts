import type { BusOptions } from './bus';

type Log = NonNullable<BusOptions['log']>;

/**
 * Logs refused requests and cancels without letting a flood of them flood the log: at most one
 * line per kind and interval, the next one saying how many were left out.
 */
export class RefusalLog {
  private readonly last = new Map<string, { at: number; suppressed: number }>();

  constructor(
    private readonly log: Log | undefined,
    private readonly intervalMs = 1_000,
    private readonly clock: () => number = Date.now,
  ) {}

  note(kind: string, msg: string, fields: Record<string, unknown>): void {
    const now = this.clock();
    const last = this.last.get(kind);
    if (last && now - last.at < this.intervalMs) {
      last.suppressed++;
      return;
    }
    const suppressed = last?.suppressed ?? 0;
    this.last.set(kind, { at: now, suppressed: 0 });
    this.log?.('warn', msg, suppressed > 0 ? { ...fields, suppressed } : fields);
  }
}
