/**
 * Item lineage: which steps' `for_each` iterate another step's items, and whether each of their
 * items can wait for its own upstream item only. `badge: for_each: ${{ steps.bg.outputs }}` makes
 * badge[i] descend from bg[i]; it waits for bg[i] alone unless badge also reads bg as a whole.
 */
import { pathText, type Expr, type Segment } from '../expressions/expressions.js';
import type { ChosenItems, ItemLineage, StepId, ValueTemplate } from '../plan.js';
import type { StepDraft } from './analyzer-types.js';
import { error, type Diagnostic } from './diagnostics.js';
import { followPath, type Shape } from './shapes.js';
import type { PathPart, SourceFile } from './source.js';
import { templateStrings } from './templates.js';

/** A `steps.X…` path found in one of a step's values, and where. */
interface StepRead {
  step: string;
  segments: Segment[];
  /** `for_each`, `if`, `with`, `run` or `cache.key`. */
  where: string;
  path: PathPart[];
  source: string;
}

function* stepPaths(expr: Expr): Generator<Extract<Expr, { kind: 'path' }>> {
  switch (expr.kind) {
    case 'path':
      if (expr.root === 'steps') yield expr;
      return;
    case 'call':
      for (const arg of expr.args) yield* stepPaths(arg);
      return;
    case 'binary':
      yield* stepPaths(expr.left);
      yield* stepPaths(expr.right);
      return;
    case 'not':
      yield* stepPaths(expr.operand);
      return;
    case 'access':
      yield* stepPaths(expr.target);
      return;
    default:
      return;
  }
}

function readsIn(value: ValueTemplate | undefined, where: string, path: PathPart[]): StepRead[] {
  if (!value) return [];
  const reads: StepRead[] = [];
  for (const { template } of templateStrings(value, path))
    for (const part of template.parts) {
      if (typeof part === 'string') continue;
      for (const expr of stepPaths(part.expr)) {
        const first = expr.segments[0];
        if (first?.kind === 'field')
          reads.push({ step: first.name, segments: expr.segments.slice(1), where, path, source: part.source });
      }
    }
  return reads;
}

type ReadingValue = 'for_each' | 'if' | 'with' | 'run' | 'cache.key';

/** A step's values that may read other steps, by the name a message gives each, and where each is written. */
const READING_VALUES: Record<ReadingValue, { of: (d: StepDraft) => ValueTemplate | undefined; at: PathPart[] }> = {
  for_each: { of: (d) => d.forEach, at: ['for_each'] },
  if: { of: (d) => d.if, at: ['if'] },
  with: { of: (d) => d.with, at: ['with'] },
  run: { of: (d) => d.run, at: ['run'] },
  'cache.key': { of: (d) => d.cacheKey, at: ['cache', 'key'] },
};

/** What `draft` reads of other steps in the values named. */
function readsOf(draft: StepDraft, values: readonly ReadingValue[]): StepRead[] {
  return values.flatMap((where) => {
    const { of, at } = READING_VALUES[where];
    return readsIn(of(draft), where, ['steps', draft.id, ...at]);
  });
}

/** The `steps.X.outputs…` path a `for_each` is made of, alone; undefined when it is anything else. */
function forEachPath(value: ValueTemplate | undefined): Extract<Expr, { kind: 'path' }> | undefined {
  if (value?.kind !== 'template' || !value.template.whole) return undefined;
  const part = value.template.parts.find((p) => typeof p !== 'string');
  if (!part || typeof part === 'string' || part.expr.kind !== 'path' || part.expr.root !== 'steps') return undefined;
  const [step, outputs] = part.expr.segments;
  if (step?.kind !== 'field' || outputs?.kind !== 'field' || outputs.name !== 'outputs') return undefined;
  return part.expr;
}

const isStepField = (read: StepRead) =>
  read.segments[0]?.kind === 'field' && ['outcome', 'conclusion'].includes(read.segments[0].name);

/**
 * Each step's lineage, for the steps whose `for_each` iterates an earlier for_each step's items;
 * a projection that does not give one value per item, and an item's `if` that reads the outcome of
 * a step it does not descend from, are diagnostics.
 */
export function itemLineages(
  drafts: StepDraft[],
  outputShapes: Map<string, Shape>,
  itemFlow: boolean,
  file: SourceFile,
  diagnostics: Diagnostic[],
): Map<string, ItemLineage> {
  const byId = new Map(drafts.map((d) => [d.id, d]));
  const lineages = new Map<string, ItemLineage>();
  for (const draft of drafts) {
    const lineage = lineageOf(draft, byId, outputShapes, itemFlow, file, diagnostics);
    if (lineage) lineages.set(draft.id, lineage);
  }
  for (const draft of drafts) checkItemConditions(draft, lineages, byId, file, diagnostics);
  return lineages;
}

function lineageOf(
  draft: StepDraft,
  byId: Map<string, StepDraft>,
  outputShapes: Map<string, Shape>,
  itemFlow: boolean,
  file: SourceFile,
  diagnostics: Diagnostic[],
): ItemLineage | undefined {
  const path = forEachPath(draft.forEach);
  const upstreamId = (path?.segments[0] as { name: string } | undefined)?.name;
  const upstream = upstreamId === undefined ? undefined : byId.get(upstreamId);
  if (!path || !upstream?.forEach || upstream.id === draft.id) return undefined;
  const rest = path.segments.slice(2);
  // `steps.X.outputs[0]…` reads one chosen item of X: every item of this step needs that one.
  if (rest.length > 0 && rest[0]!.kind !== 'wildcard') return undefined;
  const projection = rest.slice(1);
  const written = pathText('steps', path.segments);
  const forEachAt: PathPart[] = ['steps', draft.id, 'for_each'];
  const itemShape = outputShapes.get(upstream.id);
  const projected =
    itemShape?.kind === 'list'
      ? followPath(itemShape.items, projection, `${pathText('steps', path.segments.slice(0, 3))}`)
      : undefined;
  if (projection.some((s) => s.kind === 'wildcard') || (projected?.ok && projected.shape.kind === 'list')) {
    const oneEach = pathText(
      pathText('steps', path.segments.slice(0, 3)),
      projection.map((s) => (s.kind === 'wildcard' ? { kind: 'index', index: 0 } : s)),
    );
    diagnostics.push(
      error(
        file,
        file.locate(forEachAt),
        `for_each over the items of ${upstream.id} must give one value per item, but ${written} can give several ` +
          `per item ([*] flattens lists), so ${draft.id}[i] would not match ${upstream.id}[i]; take one per item, ` +
          `as in ${oneEach}${projected?.ok && projected.shape.kind === 'list' && !projection.some((s) => s.kind === 'wildcard') ? '[0]' : ''}`,
      ),
    );
    return undefined;
  }
  const lineage: ItemLineage = { step: upstream.id as StepId, projection, perItem: itemFlow };
  if (!itemFlow) return { ...lineage, wholeBecause: 'settings.item_flow is false' };
  const wholeRead = readsOf(draft, ['if', 'with', 'run', 'cache.key']).find(
    (read) => read.step === upstream.id && !isStepField(read),
  );
  if (wholeRead)
    return {
      ...lineage,
      perItem: false,
      wholeBecause: `its ${wholeRead.where} reads ${pathText('steps', [{ kind: 'field', name: wholeRead.step }, ...wholeRead.segments])} as a whole`,
    };
  return lineage;
}

/**
 * For each step, the earlier for_each steps it reads chosen items of only: every read of X in its
 * values is `steps.X.outputs[k]…` with a fixed k (the launch-kit's `branded` reads `hero[0]`). Such a
 * step can start once those items have succeeded instead of waiting for all of X, and X's other
 * items have nothing downstream waiting on them. Not with `needs: X`, which waits for all of X,
 * nor for the step a `for_each` flows from, nor with item flow off.
 */
export function chosenItemReads(
  drafts: StepDraft[],
  lineages: ReadonlyMap<string, ItemLineage>,
  itemFlow: boolean,
): Map<string, ChosenItems[]> {
  const chosen = new Map<string, ChosenItems[]>();
  if (!itemFlow) return chosen;
  const forEachSteps = new Set(drafts.filter((d) => d.forEach).map((d) => d.id));
  // Without a for_each step nothing has items to choose, and no step's values need reading.
  if (forEachSteps.size === 0) return chosen;
  for (const draft of drafts) {
    const reads = readsOf(draft, ['for_each', 'if', 'with', 'run', 'cache.key']);
    const indicesOf = new Map<string, Set<number> | null>();
    for (const read of reads) {
      if (!forEachSteps.has(read.step) || read.step === draft.id) continue;
      const [outputs, item] = read.segments;
      const index =
        outputs?.kind === 'field' && outputs.name === 'outputs' && item?.kind === 'index' && item.index >= 0
          ? item.index
          : undefined;
      const known = indicesOf.get(read.step);
      if (index === undefined || known === null) indicesOf.set(read.step, null);
      else indicesOf.set(read.step, (known ?? new Set()).add(index));
    }
    const whole = new Set([...draft.needs.map((n) => n.step), lineages.get(draft.id)?.step]);
    const steps: ChosenItems[] = [];
    for (const [step, indices] of indicesOf)
      if (indices && !whole.has(step))
        steps.push({ step: step as StepId, indices: [...indices].sort((a, b) => a - b) });
    if (steps.length > 0) chosen.set(draft.id, steps);
  }
  return chosen;
}

/** The steps item i of `id` descends from, nearest first. */
export function lineageChain(id: string, lineages: ReadonlyMap<string, ItemLineage>): string[] {
  const chain: string[] = [];
  for (let at = lineages.get(id); at && !chain.includes(at.step); at = lineages.get(at.step)) chain.push(at.step);
  return chain;
}

/**
 * In an item's `if`, `steps.Z.outcome` means the outcome of Z's item in the item's own lineage;
 * for a for_each step Z that the item does not descend from (and the step does not wait for as a
 * whole), there is no such item.
 */
function checkItemConditions(
  draft: StepDraft,
  lineages: Map<string, ItemLineage>,
  byId: Map<string, StepDraft>,
  file: SourceFile,
  diagnostics: Diagnostic[],
): void {
  const lineage = lineages.get(draft.id);
  if (!lineage?.perItem || !draft.if) return;
  const chain = lineageChain(draft.id, lineages);
  const others = readsOf(draft, ['with', 'run', 'cache.key']);
  const wholeSteps = new Set([...draft.needs.map((n) => n.step), ...others.map((r) => r.step)]);
  const ifReads = readsOf(draft, ['if']);
  // The steps whose item is in each item's lineage at run time: up the chain while links are per item.
  const perItemChain = [lineage.step as string];
  for (let at = lineages.get(lineage.step); at?.perItem && !perItemChain.includes(at.step); at = lineages.get(at.step))
    perItemChain.push(at.step);
  const ancestors = new Set<StepId>();
  let readsLineageOutcome = false;
  for (const read of ifReads) {
    if (isStepField(read) && perItemChain.includes(read.step) && !wholeSteps.has(read.step)) {
      readsLineageOutcome = true;
      if (read.step !== lineage.step) ancestors.add(read.step as StepId);
    }
    if (!isStepField(read) || chain.includes(read.step) || wholeSteps.has(read.step)) continue;
    if (!byId.get(read.step)?.forEach) continue;
    const field = (read.segments[0] as { name: string }).name;
    diagnostics.push(
      error(
        file,
        file.locateWithin(read.path, read.source),
        `steps.${read.step}.${field} in an item's if: ${draft.id}[i] descends from ${chain.map((s) => `${s}[i]`).join(' and ')}, ` +
          `not from an item of ${read.step}; read the ${field} of a step in its lineage, or add needs: ${read.step} ` +
          `to wait for all of ${read.step} and read the ${field} of the whole step`,
      ),
    );
  }
  // Read per item through the lineage, as the item's own ancestor's: never waited for as a whole.
  const onlyThroughLineage = [...ancestors].filter((id) => !ifReads.some((r) => r.step === id && !isStepField(r)));
  if (onlyThroughLineage.length > 0 || readsLineageOutcome)
    lineages.set(draft.id, {
      ...lineage,
      ...(onlyThroughLineage.length > 0 ? { ancestorsReadPerItem: onlyThroughLineage } : {}),
      ...(readsLineageOutcome ? { ifReadsLineageOutcome: true } : {}),
    });
}

/**
 * `steps.X.outputs[k]…` where X's count is known and has no item k, in a row where X runs: an error
 * before anything is sent, rather than a step that fails on a null after the items before it were
 * paid for. Counts are those `plan` gives (`runs`), chains and schemas included.
 */
export function checkChosenItemsExist(
  drafts: StepDraft[],
  runsOf: ReadonlyMap<string, ReadonlyArray<number | 'dynamic'>>,
  /** Whether a step's `if` is known false in a row (0 runs then, its readers skipped, not an empty list). */
  ifFalse: (step: string, row: number) => boolean,
  file: SourceFile,
  diagnostics: Diagnostic[],
): void {
  // Only a for_each step has items to number: without one, no step's values need reading.
  const forEachSteps = new Set(drafts.filter((d) => d.forEach).map((d) => d.id));
  if (forEachSteps.size === 0) return;
  for (const draft of drafts) {
    const readerRuns = runsOf.get(draft.id);
    for (const read of readsOf(draft, ['for_each', 'if', 'with', 'run', 'cache.key'])) {
      const [outputs, item] = read.segments;
      if (outputs?.kind !== 'field' || outputs.name !== 'outputs' || item?.kind !== 'index' || item.index < 0) continue;
      const runs = runsOf.get(read.step);
      if (!runs || !forEachSteps.has(read.step)) continue;
      // Where either is left out of a row by its if (0 runs), nothing is read there: the reader is skipped.
      const row = runs.findIndex(
        (count, at) =>
          typeof count === 'number' &&
          item.index >= count &&
          !(count === 0 && ifFalse(read.step, at)) &&
          readerRuns?.[at] !== 0,
      );
      if (row < 0) continue;
      const count = runs[row] as number;
      const written = pathText('steps', [{ kind: 'field', name: read.step }, ...read.segments.slice(0, 2)]);
      const items =
        count === 0
          ? 'no items'
          : `${count} item${count === 1 ? '' : 's'}, ${read.step}[0] to ${read.step}[${count - 1}]`;
      diagnostics.push(
        error(
          file,
          file.locateWithin(read.path, read.source),
          `${written} reads item ${item.index} of ${read.step}, which has ${items}${runs.length > 1 ? ` in batch row ${row + 1}` : ''}`,
        ),
      );
    }
  }
}
