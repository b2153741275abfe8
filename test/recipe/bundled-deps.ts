import type { AnalyzerDeps } from '../../src/recipe/analyzer.js';
import { probeFile } from '../../src/files/probe.js';
import { bundledSlugs, readBundledSchema, readRecipeLanguageSchemas } from '../../src/model-schemas/bundled.js';

/** What `pipeline validate` hands the analyzer offline with no schema cache: the package's own files. */
export const bundledDeps: AnalyzerDeps = {
  modelSchema: readBundledSchema,
  modelSlugs: bundledSlugs,
  schemas: readRecipeLanguageSchemas(),
  probe: probeFile,
};
