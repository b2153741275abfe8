import { existsSync, statSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { type Command, isShellCommand } from './command.js';

/**
 * The local files a command names: each value of its expressions (an argv element, or the value
 * of a `${{ … }}` of a shell command) that is the path of a file here, absolute or relative to
 * the run folder, where the command runs. Those are what a worker elsewhere needs to run it.
 */
export function filesNamedBy(command: Command, runDir: string): Array<{ value: string; path: string }> {
  const values = Array.isArray(command)
    ? command.slice(1).map(String)
    : isShellCommand(command)
      ? Object.values(command.env)
      : [];
  const files = new Map<string, string>();
  for (const value of values) {
    if (value.length === 0 || value.length > 4096 || value.includes('\n') || files.has(value)) continue;
    const path = isAbsolute(value) ? value : resolve(runDir, value);
    if (existsSync(path) && statSync(path).isFile()) files.set(value, path);
  }
  return [...files].map(([value, path]) => ({ value, path }));
}
