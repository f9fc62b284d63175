import type { RetrievedItem } from '@askbus/contracts';

/** Candidate `n` of the router's tests: a Thing on site `t`, retrieved with score 100 − n. */
export const candidate = (n: number): RetrievedItem => ({
  url: `https://t.test/${n}`,
  name: `Item ${n}`,
  site: 't',
  '@type': 'Thing',
  schema_object: { '@type': 'Thing', name: `Item ${n}` },
  retrievalScore: 100 - n,
});
