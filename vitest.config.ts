import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: [
      'libs/*/src/**/*.test.ts',
      'services/*/src/**/*.test.ts',
      'cli/src/**/*.test.ts',
      'deploy/**/*.test.ts',
      'test/**/*.test.ts',
      'eval/**/*.test.ts',
    ],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
