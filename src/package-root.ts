import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let root: string | undefined;

/** The folder of this package's package.json, whether running from src/ (tests) or dist/ (installed). */
export function packageRoot(): string {
  if (root) return root;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, 'package.json');
    if (existsSync(candidate) && JSON.parse(readFileSync(candidate, 'utf8')).name === 'media-pipeline') {
      root = dir;
      return root;
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error('Internal error: cannot find the media-pipeline package root');
    dir = parent;
  }
}
