import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { defineConfig } from 'vitest/config';

/**
 * The files that take longest, longest first (measured on a fresh clone of the two-core machine).
 * Vitest orders a clone it has no timings for by file size, and a short file that runs for half a
 * minute (Redis restarts, killed workers) then starts last and ends the run alone: started first,
 * they overlap the many short files instead.
 */
const LONGEST_FIRST = [
  'test/workers/workers-faults.test.ts',
  'test/cli/shared-budget.test.ts',
  'test/workers/workers.test.ts',
  'test/workers/jobs-recovered.test.ts',
  'test/engine/item-flow.test.ts',
  'test/cli/redis-restart.test.ts',
  'test/cli/cache.test.ts',
  'test/cli/ci-workflow.test.ts',
  'test/recipe/analyzer.fuzz.test.ts',
  'test/cli/action-consumer.test.ts',
  'test/package/tarball.test.ts',
];

class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (file: TestSpecification) => {
      const at = LONGEST_FIRST.findIndex((name) => file.moduleId.endsWith(name));
      return at === -1 ? LONGEST_FIRST.length : at;
    };
    // Array sort is stable: the others keep Vitest's own order (its timings when it has them).
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The suite runs many gateway-backed CLI runs at once on two cores: a run can wait a while for CPU.
    // Beside another suite, tests of real processes took up to three times their idle time (the
    // SIGKILL resume test 12 s alone, 41 s there): the limit catches a hang, not a slow machine.
    testTimeout: 120_000,
    hookTimeout: 30_000,
    // Each file starts its own gateways on free loopback ports; files run in parallel. Vitest's
    // default is one file at a time on two cores (CPUs - 1), and most files wait on sockets, Redis
    // windows or child processes more than they compute: three at once keep both cores busy.
    pool: 'forks',
    maxWorkers: 3,
    // A worker process runs its files one after another in one module graph rather than loading
    // the project's modules afresh for each file (a fifth of the suite's time on two cores). The
    // tests share no state but their own gateways, folders and Redis servers: none mocks a module,
    // stubs a global or changes process.env.
    isolate: false,
    sequence: { sequencer: LongestFirst },
    // The suite itself may run inside GitHub Actions: its CLI processes must not print workflow
    // commands or append to the job's summary unless a test asks for that.
    env: { GITHUB_ACTIONS: '', GITHUB_STEP_SUMMARY: '' },
  },
});
