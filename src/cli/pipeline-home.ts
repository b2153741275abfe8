import { pipelineHomeOf, schemaCacheDirOf } from '../session/environment.js';
import { cliIo } from './io.js';

/** `.pipeline` in the working directory, or where PIPELINE_HOME points: runs, caches and logs live there. */
export function pipelineHome(env: NodeJS.ProcessEnv = cliIo().env): string {
  return pipelineHomeOf(env, cliIo().cwd);
}

/** Where live model schemas are cached: `pipeline models schema` writes there, offline analysis reads there. */
export function schemaCacheDir(home: string = pipelineHome()): string {
  return schemaCacheDirOf(home);
}
