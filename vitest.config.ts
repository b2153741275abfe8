import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The suite runs many gateway-backed CLI runs at once on two cores: a run can wait a while for CPU.
    testTimeout: 60_000,
    hookTimeout: 30_000,
    // Each file starts its own gateways on free loopback ports; files run in parallel. Vitest's
    // default is one file at a time on two cores (CPUs - 1), and most files wait on sockets, Redis
    // windows or child processes more than they compute: three at once keep both cores busy.
    pool: 'forks',
    maxWorkers: 3,
    // The suite itself may run inside GitHub Actions: its CLI processes must not print workflow
    // commands or append to the job's summary unless a test asks for that.
    env: { GITHUB_ACTIONS: '', GITHUB_STEP_SUMMARY: '' },
  },
});
