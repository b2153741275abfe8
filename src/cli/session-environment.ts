import type { SessionEnvironment } from '../session/environment.js';
import { redact, registerSecret } from './output.js';
import { pipelineHome } from './pipeline-home.js';
import { cliIo } from './io.js';

/** The running command's process as a session sees it: its variables, folder, clock, home and secret filter. */
export function sessionEnvironment(home: string = pipelineHome()): SessionEnvironment {
  const io = cliIo();
  return {
    env: io.env,
    cwd: io.cwd,
    clock: io.clock,
    home,
    secrets: { register: registerSecret, redact },
    warn: (text) => io.stderr.write(`${redact(text)}\n`),
  };
}
