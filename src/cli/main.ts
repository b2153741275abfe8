#!/usr/bin/env node
import { writeFileSync } from 'node:fs';
import { processIo, runCommandLine } from './program.js';

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
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(0);
    throw error;
  });
}

const { exitCode, ended } = await runCommandLine(process.argv.slice(2), processIo(), true);
// A command that threw (its error printed, or --help and --version) ends at once, whatever it left
// open; one that returned ends when its work is done, with the code it set.
if (ended === 'threw') process.exit(exitCode);
process.exitCode = exitCode;
