// The TypeScript types of the wire shapes that schemas/ defines, generated so that the client and
// the local gateway cannot drift from the schemas (or from each other). `npm run wire-types`
// rewrites src/wire/tools.ts; test/architecture/wire-types.test.ts fails when it is out of date.
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { compile } from 'json-schema-to-typescript';

const root = fileURLToPath(new URL('../../', import.meta.url));
export const WIRE_FILE = 'src/wire/tools.ts';
const SCHEMAS = [
  ['schemas/tools/web-search.json', 'WebSearchRequest'],
  ['schemas/tools/web-fetch.json', 'WebFetchRequest'],
];

/** The text src/wire/tools.ts should have: each schema's type, formatted as the project formats. */
export async function wireTypes() {
  const parts = [];
  for (const [path, name] of SCHEMAS) {
    const schema = JSON.parse(readFileSync(`${root}${path}`, 'utf8'));
    // The title names the type; minItems/maxItems stay checks of the schema, not tuple types.
    const typed = { ...schema, title: name };
    parts.push(await compile(typed, name, { bannerComment: '', format: false, ignoreMinAndMaxItems: true }));
  }
  const banner = `// Generated from ${SCHEMAS.map(([path]) => path).join(' and ')} by \`npm run wire-types\`: do not edit.\n\n`;
  const formatted = spawnSync(`${root}node_modules/.bin/biome`, ['format', `--stdin-file-path=${WIRE_FILE}`], {
    input: banner + parts.join('\n'),
    encoding: 'utf8',
  });
  if (formatted.status !== 0) throw new Error(`biome format failed: ${formatted.stderr}`);
  return formatted.stdout;
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv.includes('--write')) {
  writeFileSync(`${root}${WIRE_FILE}`, await wireTypes());
  console.log(`wrote ${WIRE_FILE}`);
}
