import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { mediaKind } from '../files/media-kind.js';
import { probeFile } from '../files/probe.js';
import { sniffAll } from '../files/sniff.js';
import {
  bundledSlugs,
  readBundledSchema,
  readRecipeLanguageSchemas,
  type JsonSchema,
} from '../model-schemas/bundled.js';
import { schemaCacheFile } from '../model-schemas/cache-file.js';
import type { Plan } from '../plan.js';
import { analyze, type AnalyzerDeps, type AnalyzerInput } from '../recipe/analyzer.js';
import type { Diagnostic } from '../recipe/diagnostics.js';
import type { FileProbe } from '../recipe/inputs.js';
import type { Result } from '../result.js';
import { schemaCacheDirOf } from './environment.js';
import { UsageError } from './errors.js';

/** Schemas as offline analysis sees them: the last live copy cached under `home`, else the bundled one. */
export function offlineSchemas(home: string): (slug: string) => JsonSchema | undefined {
  // Read once per model: the engine asks for every task it submits.
  const known = new Map<string, JsonSchema | undefined>();
  return (slug) => {
    if (known.has(slug)) return known.get(slug);
    const schema = read(slug);
    known.set(slug, schema);
    return schema;
  };
  function read(slug: string): JsonSchema | undefined {
    const cached = schemaCacheFile(schemaCacheDirOf(home), slug);
    if (existsSync(cached)) {
      try {
        const entry = JSON.parse(readFileSync(cached, 'utf8')) as { schema?: JsonSchema };
        if (entry.schema) return entry.schema;
      } catch {
        // A broken cache entry: the bundled copy below.
      }
    }
    return readBundledSchema(slug);
  }
}

/** What the analyzer reads through: schemas as offline analysis sees them, and the file system's probe. */
export function analyzerDeps(
  schemas: (slug: string) => JsonSchema | undefined,
  probe: AnalyzerDeps['probe'] = probeFile,
): AnalyzerDeps {
  return { modelSchema: schemas, modelSlugs: bundledSlugs, schemas: readRecipeLanguageSchemas(), probe };
}

function readText(path: string, cwd: string, what: string): string {
  try {
    return readFileSync(resolve(cwd, path), 'utf8');
  } catch {
    throw new UsageError(`cannot read the ${what} ${path}`);
  }
}

/** What a recipe is run with: its inputs as `name=value` (as `--set` gives them) and a batch file of rows. */
export interface RecipeInputs {
  set?: string[];
  batch?: string;
  skipInvalidRows?: boolean;
}

/**
 * Reads and analyzes a recipe, its paths relative to `cwd`. A recipe that does not analyze is a
 * value (its diagnostics name file, line and field); a file that cannot be read is a UsageError.
 */
export async function loadRecipeFile(
  path: string,
  inputs: RecipeInputs,
  cwd: string,
  schemas: (slug: string) => JsonSchema | undefined,
): Promise<Result<Plan, Diagnostic[]>> {
  const text = readText(path, cwd, 'recipe');
  const batch = inputs.batch ? { path: inputs.batch, text: readText(inputs.batch, cwd, 'batch file') } : undefined;
  const source: AnalyzerInput = {
    path,
    text,
    cwd,
    ...(inputs.set?.length ? { sets: inputs.set } : {}),
    ...(batch ? { batch } : {}),
    ...(inputs.skipInvalidRows ? { skipInvalidRows: true } : {}),
  };
  return analyzeWithMediaBytes(source, schemas);
}

/**
 * Analyzes a recipe, then reads the first bytes of the local files its media fields name: a text
 * file called `notes.png` is an error at its line now, not a failed upload after other steps have
 * spent. The analyzer does no I/O, so a file whose bytes are not what its name says (rare) costs a
 * second analysis that knows them; every other recipe is analyzed once.
 */
async function analyzeWithMediaBytes(
  source: AnalyzerInput,
  schemas: (slug: string) => JsonSchema | undefined,
): Promise<Result<Plan, Diagnostic[]>> {
  const first = mediaProbe();
  const loaded = analyze(source, analyzerDeps(schemas, first.probe));
  if (first.unread.size === 0) return loaded;
  const types = await sniffAll(first.unread);
  // No media type, or another kind than the name says (a name that says none is always read again).
  const surprising = [...types].some(([file, mime]) => !mime?.startsWith(`${mediaKind(file)}/`));
  return surprising ? analyze(source, analyzerDeps(schemas, mediaProbe(types).probe)) : loaded;
}

/**
 * `probeFile` that also answers the sniffed types of media files (`types`, read beforehand), and
 * lists the media files it was asked about whose types it did not have.
 */
function mediaProbe(types: ReadonlyMap<string, string | null> = new Map()): {
  probe: FileProbe;
  unread: Set<string>;
} {
  const unread = new Set<string>();
  const probe: FileProbe = (path, use) => {
    const found = probeFile(path);
    if (use !== 'media' || !found || found.folder) return found;
    if (!types.has(path)) {
      unread.add(path);
      return found;
    }
    return { ...found, mime: types.get(path) ?? null };
  };
  return { probe, unread };
}
