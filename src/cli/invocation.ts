import { realpathSync, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';

function realpath(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}

/**
 * How the user can run this tool again from a shell: `pipeline` when that name on PATH is this
 * very program (installed globally or linked), else `npx pipeline` (run from a project's install).
 */
export function commandName(argv1 = process.argv[1], path = process.env.PATH ?? ''): string {
  const self = argv1 ? realpath(argv1) : undefined;
  if (!self) return 'npx pipeline';
  for (const dir of path.split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, 'pipeline');
    try {
      if (!statSync(candidate).isFile()) continue;
    } catch {
      continue;
    }
    return realpath(candidate) === self ? 'pipeline' : 'npx pipeline';
  }
  return 'npx pipeline';
}
