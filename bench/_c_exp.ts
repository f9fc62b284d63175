import { startLoadSystem } from './load-cluster';
import { StreamClient, burst } from './load-client';
import { percentiles } from './load-stats';
const delay = Number(process.argv[2] ?? 3000);
const n = Number(process.argv[3] ?? 1000);
process.env.ASKBUS_LOAD_CPU_PROF_DIR = "/tmp/c-prof";
const sys = await startLoadSystem({ rankers: 1, rankDelayMs: delay });
try {
  const c = new StreamClient(new URL(sys.url), { timeoutMs: 120_000 });
  const b = await burst(c, n);
  const ok = b.samples.filter((s) => !s.error);
  console.log('delay', delay, 'wall', b.wallMs, 'peakStreaming', c.peakStreaming, 'ok', ok.length);
  console.log('headers', percentiles(ok.map((s) => s.headersMs)), 'end', percentiles(ok.map((s) => s.endMessageMs)));
  const starts = b.samples.map((s) => s.startedAt - b.samples[0]!.startedAt);
  console.log('issue spread ms', Math.max(...starts));
  c.close();
} finally {
  await sys.stop();
}
