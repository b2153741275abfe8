import { listRunIds, runExists } from '../store/run-store.js';
import { UsageError } from './errors.js';
import { shown } from './output.js';

/** How a run may be named on the command line: its id, `latest`, or a prefix of one id only. */
export const RUN_ID_HELP = 'a run id, a prefix of exactly one run id, or latest (the newest run)';

/** The run a command-line name stands for; a usage error when it names none or several. */
export function resolveRunId(home: string, name: string): string {
  if (runExists(home, name)) return name;
  const ids = listRunIds(home);
  const where = `${shown(home)}/runs`;
  if (name === 'latest') {
    if (ids.length === 0) throw new UsageError(`no runs in ${where} yet, so none is latest`);
    return ids[0]!;
  }
  const matches = name === '' ? [] : ids.filter((id) => id.startsWith(name));
  if (matches.length === 1) return matches[0]!;
  if (matches.length > 1) {
    const listed = matches.slice(0, 5).join(', ') + (matches.length > 5 ? `, and ${matches.length - 5} more` : '');
    throw new UsageError(`'${name}' is the start of ${matches.length} run ids (${listed}); give more of the id`);
  }
  throw new UsageError(`no run ${name} in ${where} (pipeline runs list shows them)`);
}
