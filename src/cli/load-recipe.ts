import { existsSync, readFileSync } from 'node:fs';
import { probeFile } from '../files/probe.js';
import { readBundledSchema, readRecipeLanguageSchemas, type JsonSchema } from '../model-schemas/bundled.js';
import { schemaCacheFile } from '../model-schemas/cache-file.js';
import type { Plan } from '../plan.js';
import { analyze, type AnalyzerDeps } from '../recipe/analyzer.js';
import type { Diagnostic } from '../recipe/diagnostics.js';
import type { Result } from '../result.js';
import { UsageError } from './errors.js';
import { pipelineHome, schemaCacheDir } from './pipeline-home.js';
import { cliIo, fromCwd } from './io.js';

/** Schemas as offline analysis sees them: the last live copy cached on disk, else the bundled one. */
export function offlineSchemas(home = pipelineHome()): (slug: string) => JsonSchema | undefined {
  // Read once per model: the engine asks for every task it submits.
  const known = new Map<string, JsonSchema | undefined>();
  return (slug) => {
    if (known.has(slug)) return known.get(slug);
    const schema = read(slug);
    known.set(slug, schema);
    return schema;
  };
  function read(slug: string): JsonSchema | undefined {
    const cached = schemaCacheFile(schemaCacheDir(home), slug);
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

function readText(path: string, what: string): string {
  try {
    return readFileSync(fromCwd(path), 'utf8');
  } catch {
    throw new UsageError(`cannot read the ${what} ${path}`);
  }
}

/** What the analyzer reads through: schemas as offline analysis sees them, and the file system's probe. */
export function analyzerDeps(schemas = offlineSchemas()): AnalyzerDeps {
  return { modelSchema: schemas, schemas: readRecipeLanguageSchemas(), probe: probeFile };
}

/** Reads and analyzes a recipe as the command line gives it. */
export function loadRecipe(
  path: string,
  options: { set?: string[]; batch?: string; skipInvalidRows?: boolean },
  schemas = offlineSchemas(),
): Result<Plan, Diagnostic[]> {
  const text = readText(path, 'recipe');
  const batch = options.batch ? { path: options.batch, text: readText(options.batch, 'batch file') } : undefined;
  return analyze(
    {
      path,
      text,
      cwd: cliIo().cwd,
      ...(options.set?.length ? { sets: options.set } : {}),
      ...(batch ? { batch } : {}),
      ...(options.skipInvalidRows ? { skipInvalidRows: true } : {}),
    },
    analyzerDeps(schemas),
  );
}
