import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['packages/*/src/**/*.test.ts', 'test/**/*.test.ts'],
    // chdb is a native engine bound to one data directory per process; it crashes under
    // worker threads, so every test file runs in its own forked process.
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
})
