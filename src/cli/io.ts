import { AsyncLocalStorage } from 'node:async_hooks';
import { resolve } from 'node:path';
import type { Writable } from 'node:stream';
import { systemClock, type Clock } from '../clock.js';

/** A stream the command line prints to; the live view draws on it when it is a sized terminal. */
export type CliOutput = Writable & { isTTY?: boolean; rows?: number; columns?: number };

/** Where Ctrl-C comes from: the process's SIGINT and SIGTERM, or a test's own button. */
export interface Interrupts {
  /** Calls `handler` at each interrupt; answers the function that stops listening. */
  listen(handler: () => void): () => void;
  /** A second Ctrl-C: end at once with `code`, whatever is under way. */
  quitNow(code: number): void;
}

const processInterrupts: Interrupts = {
  listen(handler) {
    process.on('SIGINT', handler);
    process.on('SIGTERM', handler);
    return () => {
      process.off('SIGINT', handler);
      process.off('SIGTERM', handler);
    };
  },
  quitNow: (code) => process.exit(code),
};

/**
 * Everything a command reads from or writes to its process: the streams, the environment, the
 * working folder, the name it was started by, the clock its waits go through, and Ctrl-C.
 * `pipeline` gives the process's own; a test gives its own streams, variables, folder, a manual
 * clock and a Ctrl-C button, and runs the same commands in its own process.
 */
export interface CliIo {
  readonly stdout: CliOutput;
  readonly stderr: CliOutput;
  readonly stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  readonly env: NodeJS.ProcessEnv;
  /** The working folder: relative paths on the command line and in variables are relative to it. */
  readonly cwd: string;
  /** The path this program was started by (process.argv[1]): its name in help and usage lines. */
  readonly argv1: string | undefined;
  readonly clock: Clock;
  readonly interrupts: Interrupts;
}

/** The process's own streams, variables, folder and time. */
export function processIo(): CliIo {
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    // Read only by a command that asks on a terminal: touching process.stdin opens it.
    get stdin() {
      return process.stdin;
    },
    env: process.env,
    cwd: process.cwd(),
    argv1: process.argv[1],
    clock: systemClock,
    interrupts: processInterrupts,
  };
}

/** One command line's run: its io, the exit code its command set, and the values it must never print. */
interface Invocation {
  io: CliIo;
  exitCode: number;
  secrets: Set<string>;
}

/**
 * The invocation each command runs in. Kept per asynchronous context, not passed down every call,
 * so that the commands read their io in one way whether one runs in a process or several run at
 * once in a test's process.
 */
const current = new AsyncLocalStorage<Invocation>();

/**
 * The invocation of a process that runs one command line only (the `pipeline` bin): kept here, not
 * in async context, since async context hooks every promise the command makes (a tenth of the CPU
 * of a batch's tasks went to propagating it).
 */
let soleInvocation: Invocation | undefined;

/**
 * Runs `work` as one invocation on `io`; answers what it returned and the exit code a command set.
 * `sole`: the process runs this invocation and no other, now or later.
 */
export async function withInvocation<T>(
  io: CliIo,
  work: () => Promise<T>,
  sole = false,
): Promise<{ value: T; exitCode: number }> {
  const invocation: Invocation = { io, exitCode: 0, secrets: new Set() };
  if (sole) soleInvocation = invocation;
  const value = await (sole ? work() : current.run(invocation, work));
  return { value, exitCode: invocation.exitCode };
}

/** The invocation running now, if any. */
const invocationNow = (): Invocation | undefined => current.getStore() ?? soleInvocation;

/** The io of the command running now (the process's own outside any invocation). */
export function cliIo(): CliIo {
  return invocationNow()?.io ?? processIo();
}

const processSecrets = new Set<string>();

/** The values (keys) the running command must never print: each invocation has its own. */
export function secretsOfInvocation(): Set<string> {
  return invocationNow()?.secrets ?? processSecrets;
}

/** Sets the exit code the command line ends with, once the command returns. */
export function setExitCode(code: number): void {
  const invocation = invocationNow();
  if (invocation) invocation.exitCode = code;
  else process.exitCode = code;
}

/** A path from the command line or a variable, made absolute against the invocation's working folder. */
export const fromCwd = (path: string): string => resolve(cliIo().cwd, path);
