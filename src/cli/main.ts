#!/usr/bin/env node
import { writeFileSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { processIo, runCommandLine } from './program.js';
import { capYoungGeneration } from './young-generation.js';

// A run's heap is mostly garbage between collections: a batch task allocates about 160 KB and keeps
// none of it. V8 lets the heap grow to three or four times what is live before collecting, which
// made a batch's peak RSS three times its live heap; at 1.5 times, a 10,000-row batch peaks at
// 160 MB rather than 235 MB for the same CPU (bench batch-100k). The bin only: a program that
// imports the library keeps its own settings. Not for `validate` and `plan` of a recipe alone, which
// build one plan that lives until they exit: collecting that often cost them a tenth of their time
// (bench plan-10k). With a batch they read it row by row, and the rows' garbage is most of their
// heap: a 1,000,000-row `validate` peaks at 299 MB with the setting, 395 MB without.
const args = process.argv.slice(2);
const analysisOnly = ['validate', 'plan'].includes(args[0] ?? '') && !args.some((a) => a.startsWith('--batch'));
if (!analysisOnly) {
  setFlagsFromString('--heap-growing-percent=50');
  // And the young generation at 16 MB rather than V8's 32 (see capYoungGeneration), held small
  // through the analysis of a run's batch until its tasks start.
  capYoungGeneration(16, { holdUntilReleased: args[0] === 'run' || args[0] === 'resume' });
}

// For benchmarks: the process's own CPU time and peak memory, written as JSON when it exits.
const usageFile = process.env.PIPELINE_USAGE_FILE;
if (usageFile) {
  process.on('exit', () => {
    const usage = process.resourceUsage();
    writeFileSync(
      usageFile,
      JSON.stringify({
        user_ms: usage.userCPUTime / 1000,
        system_ms: usage.systemCPUTime / 1000,
        max_rss_kb: usage.maxRSS,
      }),
    );
  });
}

// A reader that closed the pipe (`pipeline runs list | head -1`) has all it wanted: stop quietly.
// But not a command at work (`pipeline run … 2>&1 | head -1`): like a console that cannot be
// written otherwise (stderr sent to a file on a full disk), a closed pipe must not stop a run in
// progress, which would leave a paid submission sent and unrecorded: the journal keeps the run's
// record, the run goes on unprinted, and its exit code says that something it printed was lost.
const atWork = ['run', 'resume', 'worker', 'gateway'].includes(args[0] ?? '');
let consoleLost = false;
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE' && !atWork) process.exit(0);
    consoleLost = true;
  });
}

const { exitCode, ended } = await runCommandLine(process.argv.slice(2), processIo(), true);
// A command that threw (its error printed, or --help and --version) ends at once, whatever it left
// open; one that returned ends when its work is done, with the code it set.
const code = consoleLost && exitCode === 0 ? 1 : exitCode;
if (ended === 'threw') process.exit(code);
process.exitCode = code;
