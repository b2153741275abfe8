/** hashFiles(): one SHA-256 over the files that glob patterns match, as GitHub Actions computes it. */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { ExpressionError } from '../expressions/expressions.js';

/** The most files one call may look at: a pattern over a huge tree is a mistake, not a cache key. */
const MAX_FILES = 10_000;

/** A glob as a regular expression: `**` crosses folders, `*` and `?` do not. */
function globRegExp(pattern: string): RegExp {
  let source = '';
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern[i]!;
    if (char === '*' && pattern[i + 1] === '*') {
      const slash = pattern[i + 2] === '/';
      source += slash ? '(?:.*/)?' : '.*';
      i += slash ? 2 : 1;
    } else if (char === '*') source += '[^/]*';
    else if (char === '?') source += '[^/]';
    else source += char.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${source}$`);
}

function listFiles(root: string): string[] {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.name === '.git' || entry.name === 'node_modules') continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile()) files.push(relative(root, path).split(sep).join('/'));
      if (files.length > MAX_FILES)
        throw new ExpressionError(`hashFiles() found more than ${MAX_FILES} files under ${root}`);
    }
  };
  walk(root);
  return files;
}

/**
 * Patterns are relative to `root` (the recipe's folder); a pattern starting with `!` excludes what
 * it matches. Each file's SHA-256 feeds one final SHA-256, in path order; no match gives ''.
 */
export function hashFilesUnder(root: string, patterns: string[]): string {
  const include = patterns.filter((p) => !p.startsWith('!')).map((p) => globRegExp(p.replace(/^\.\//, '')));
  const exclude = patterns.filter((p) => p.startsWith('!')).map((p) => globRegExp(p.slice(1).replace(/^\.\//, '')));
  const matched = listFiles(root)
    .filter((file) => include.some((re) => re.test(file)) && !exclude.some((re) => re.test(file)))
    .sort();
  if (matched.length === 0) return '';
  const total = createHash('sha256');
  for (const file of matched)
    total.update(
      createHash('sha256')
        .update(readFileSync(join(root, file)))
        .digest(),
    );
  return total.digest('hex');
}
