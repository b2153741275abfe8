import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { PassThrough, Writable } from 'node:stream';
import { systemClock, type Clock } from '../../src/clock.js';
import { type Interrupts, runCli } from '../../src/cli/program.js';
import type { LocalGateway } from '../../src/local-gateway/index.js';
import { ManualClock } from './manual-clock.js';
import { requestsInFlight, runSkippingTime } from './time-skipping.js';

/** What a command line printed and how it ended, in the shape of execa's result the tests read. */
export interface CliResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

export interface InProcessOptions {
  /** The command's whole environment (nothing of this process's is added, as execa's extendEnv: false). */
  env?: Record<string, string | undefined>;
  cwd?: string;
  /** The clock the command's waits go through. A ManualClock is moved on whenever nothing is under way. */
  clock?: Clock;
  /** The gateway that shares the manual clock: time moves on only while it handles no request. */
  gateway?: LocalGateway;
  /** The command's Ctrl-C: a test's own button (default: none is ever pressed). */
  interrupts?: TestInterrupts;
  /**
   * Called each time the time-skipping loop looks at the work, many times between two moves of the
   * clock: where a test acts at a point of the run (presses Ctrl-C after the fourth submission).
   */
  observe?: () => void;
}

/** Ctrl-C for a command in this process: `press()` is the user's key. A second press would quit at once. */
export class TestInterrupts implements Interrupts {
  private readonly handlers = new Set<() => void>();
  /** The exit code a second press asked to quit with at once, if one did. */
  quitWith: number | undefined;
  listen(handler: () => void): () => void {
    this.handlers.add(handler);
    return () => this.handlers.delete(handler);
  }
  quitNow(code: number): void {
    this.quitWith = code;
  }
  press(): void {
    for (const handler of [...this.handlers]) handler();
  }
  /** Whether a command listens now: it has started its run and not yet ended it. */
  listened(): boolean {
    return this.handlers.size > 0;
  }
}

/** A stream that keeps what is written to it, as text. */
class Collected extends Writable {
  private readonly chunks: string[] = [];
  override _write(chunk: Buffer | string, _encoding: BufferEncoding, done: () => void): void {
    this.chunks.push(typeof chunk === 'string' ? chunk : chunk.toString('utf8'));
    done();
  }
  text(): string {
    return this.chunks.join('');
  }
}

/** Execa's way: the last line feed of an output is not part of it. */
const trimmed = (text: string) => text.replace(/\r?\n$/, '');

/**
 * Runs one `pipeline …` command line in this process through the entry point the bin runs
 * (runCli), with its own streams, environment and working folder. On a manual clock, time skips
 * whenever the command and the gateway have nothing under way, so no poll or backoff waits in real
 * time; several commands at once on one manual clock go through `skippingTime` together instead.
 */
export async function pipelineInProcess(args: string[], options: InProcessOptions = {}): Promise<CliResult> {
  const { clock } = options;
  if (clock instanceof ManualClock)
    return skippingTime(clock, options.gateway, commandLine(args, options), options.observe);
  return commandLine(args, options);
}

/** Runs `work` (commands started with `commandLine` on `clock`) to its end, skipping time while nothing is under way. */
export function skippingTime<T>(
  clock: ManualClock,
  gateway: LocalGateway | undefined,
  work: Promise<T>,
  observe?: () => void,
): Promise<T> {
  const busy = requestsInFlight(gateway ? { gateway } : {});
  if (observe) {
    busy['(none: the test looks at the run)'] = () => {
      observe();
      return false;
    };
  }
  // On a loaded machine a command's real I/O can last: quiet or busy, it gets far longer than the
  // defaults before the loop calls it stuck. Neither bound slows a command that ends: they only delay
  // the failure.
  return runSkippingTime(clock, work, { busy, confirmMs: 10_000, stallMs: 50_000 });
}

/** One command line in this process, its time left to whoever drives its clock. */
export async function commandLine(args: string[], options: InProcessOptions = {}): Promise<CliResult> {
  const stdout = new Collected();
  const stderr = new Collected();
  // Not a terminal, and nothing to read: no prompt is shown.
  const stdin = new PassThrough();
  stdin.end();
  const exitCode = await runCli(args, {
    stdout,
    stderr,
    stdin,
    env: { ...options.env },
    cwd: options.cwd ?? process.cwd(),
    argv1: undefined,
    clock: options.clock ?? systemClock,
    interrupts: options.interrupts ?? new TestInterrupts(),
  });
  return { exitCode, stdout: trimmed(stdout.text()), stderr: trimmed(stderr.text()) };
}

export const builtCli = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

/**
 * `pipeline …` as a process of its own (the built dist/cli/main.js), on real time: for what only a
 * process shows (signals, two runs truly at once, the bin). Its exit code is -1 when a signal ended it.
 */
export async function pipelineProcess(
  args: string[],
  /** `bin`: the path it is started by, a link to the built CLI as npm installs one; default the CLI itself. */
  options: { env?: Record<string, string | undefined>; cwd?: string; bin?: string } = {},
): Promise<CliResult> {
  const result = await execa('node', [options.bin ?? builtCli, ...args], {
    reject: false,
    env: options.env ?? {},
    extendEnv: false,
    ...(options.cwd ? { cwd: options.cwd } : {}),
  });
  return { exitCode: result.exitCode ?? -1, stdout: result.stdout, stderr: result.stderr };
}
