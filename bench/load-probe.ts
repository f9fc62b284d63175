/**
 * Preloaded (`node --import tsx --import ./bench/load-probe.ts …`) into every service process of
 * bench:load, and imported by load-system.ts: answers the parent's memory questions over the IPC
 * channel, after a full GC when the process runs with --expose-gc, so a heap that only holds
 * garbage does not look like a leak. Exits when the parent goes away, so no process is left over.
 */
export type ProbeRequest = { type: 'memory'; id: number };
export type ProbeReply = { type: 'memory'; id: number; rss: number; heapUsed: number; gc: boolean };

if (process.send) {
  const gc = (globalThis as { gc?: () => void }).gc;
  process.on('message', (m: ProbeRequest) => {
    if (m?.type !== 'memory') return;
    gc?.();
    const { rss, heapUsed } = process.memoryUsage();
    process.send?.({ type: 'memory', id: m.id, rss, heapUsed, gc: Boolean(gc) } satisfies ProbeReply);
  });
  process.on('disconnect', () => process.exit(1));
}
