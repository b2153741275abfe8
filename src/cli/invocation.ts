import { realpathSync, statSync } from 'node:fs';
import { basename, delimiter, join } from 'node:path';
import { cliIo } from './io.js';

/** The package's two bins: `media-pipeline` is the name that is safe anywhere, `pipeline` the short one. */
const BIN_NAMES = ['pipeline', 'media-pipeline'] as const;

/**
 * Run through npx where no name on PATH is this program. Never `npx pipeline`: outside a project
 * that depends on this package, npx would fetch an unrelated registry package of that name.
 */
const NPX = 'npx media-pipeline';

function realpath(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}

/** The name this process was started by, for its help and usage lines: `media-pipeline` or `pipeline`. */
export function programName(argv1 = cliIo().argv1): string {
  return argv1 && basename(argv1) === 'media-pipeline' ? 'media-pipeline' : 'pipeline';
}

/**
 * A project's `node_modules/.bin`: npm puts it on the PATH of what `npx` and `npm run` start, so a
 * name found there is not one the user's own shell would find.
 */
const NPM_BIN = /(^|[\\/])node_modules[\\/]\.bin[\\/]?$/;

/**
 * How the user can run this tool again from a shell: `pipeline` (or `media-pipeline`) when that
 * name on PATH is this very program (installed globally or linked), else `npx media-pipeline`.
 */
export function commandName(argv1 = cliIo().argv1, path = cliIo().env.PATH ?? ''): string {
  const self = argv1 ? realpath(argv1) : undefined;
  if (!self) return NPX;
  const preferred = programName(argv1);
  const names = [preferred, ...BIN_NAMES.filter((name) => name !== preferred)];
  for (const name of names) {
    for (const dir of path.split(delimiter)) {
      if (!dir || NPM_BIN.test(dir)) continue;
      const candidate = join(dir, name);
      try {
        if (!statSync(candidate).isFile()) continue;
      } catch {
        continue;
      }
      if (realpath(candidate) === self) return name;
      break;
    }
  }
  return NPX;
}
