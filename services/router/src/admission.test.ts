import { describe, expect, it } from 'vitest';
import { Admission } from './admission';

const later = () => {
  let resolve!: () => void;
  const done = new Promise<void>((r) => (resolve = r));
  return { done, resolve };
};

describe('Admission', () => {
  it('runs at most `limit` calls at once, the others in arrival order', async () => {
    const admission = new Admission(2);
    const gates = Array.from({ length: 5 }, later);
    const started: number[] = [];
    const runs = gates.map((g, i) =>
      admission.run(undefined, async () => {
        started.push(i);
        await g.done;
        return i;
      }),
    );
    await Promise.resolve();
    expect(started).toEqual([0, 1]);
    expect(admission.queued).toBe(3);
    gates[1]!.resolve();
    await runs[1];
    await new Promise((r) => setImmediate(r));
    expect(started).toEqual([0, 1, 2]);
    for (const g of gates) g.resolve();
    expect(await Promise.all(runs)).toEqual([0, 1, 2, 3, 4]);
    expect(admission.inFlight).toBe(0);
    expect(admission.queued).toBe(0);
  });

  it('a call given up while waiting leaves the queue and is never run', async () => {
    const admission = new Admission(1);
    const gate = later();
    const first = admission.run(undefined, () => gate.done);
    const abort = new AbortController();
    let ran = false;
    const second = admission.run(abort.signal, async () => void (ran = true));
    expect(admission.queued).toBe(1);
    abort.abort(new Error('client left'));
    await expect(second).rejects.toThrow('client left');
    expect(admission.queued).toBe(0);
    gate.resolve();
    await first;
    expect(ran).toBe(false);
    expect(admission.inFlight).toBe(0);
  });

  it('a failing call frees its place', async () => {
    const admission = new Admission(1);
    await expect(admission.run(undefined, () => Promise.reject(new Error('no')))).rejects.toThrow('no');
    expect(await admission.run(undefined, async () => 'next')).toBe('next');
  });
});
