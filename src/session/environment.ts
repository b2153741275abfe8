import { join, relative, resolve } from 'node:path';
import type { Clock } from '../clock.js';

/** Values (API keys, passwords) that no message, log line or journal entry may show. */
export interface Secrets {
  /** Adds a value to hide; values shorter than 4 characters are not worth hiding (they would mask ordinary text). */
  register(value: string | undefined): void;
  /** `text` with every registered value replaced by `***`. */
  redact(text: string): string;
}

/** A set of secrets of its own: a library run does not share the command line's. */
export function secretSet(): Secrets {
  const values = new Set<string>();
  return {
    register(value) {
      if (value && value.length >= 4) values.add(value);
    },
    redact(text) {
      let out = text;
      for (const secret of values) out = out.split(secret).join('***');
      return out;
    },
  };
}

/**
 * What a run reads of the process it runs in, passed in rather than read from globals, so that the
 * command line, a library caller and a test each give their own.
 */
export interface SessionEnvironment {
  /** The variables a run reads: PIPELINE_*, AWS_* for a remote cache, and what `settings.pass_env` passes on. */
  readonly env: NodeJS.ProcessEnv;
  /** The working folder: relative paths (recipe, batch, `out`, cache folder) are relative to it. */
  readonly cwd: string;
  readonly clock: Clock;
  /** The pipeline home: runs, the step cache, learned durations and the local gateway's data live there. */
  readonly home: string;
  readonly secrets: Secrets;
  /** A warning for people (a `--force` that goes on over damage, a Redis budget that falls back). */
  warn(text: string): void;
}

/** `.pipeline` in the working folder, or where PIPELINE_HOME points. */
export const pipelineHomeOf = (env: NodeJS.ProcessEnv, cwd: string): string =>
  resolve(cwd, env.PIPELINE_HOME ?? '.pipeline');

/** Where live model schemas are cached: `pipeline models schema` writes there, offline analysis reads there. */
export const schemaCacheDirOf = (home: string): string => join(home, 'cache', 'schemas');

/** A path as the user would type it: relative to the working folder when inside it, else absolute. */
export function shownPath(path: string, cwd: string): string {
  const rel = relative(cwd, resolve(cwd, path));
  return rel.startsWith('..') ? resolve(cwd, path) : rel;
}
