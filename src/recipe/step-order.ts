import type { StepDraft } from './analyzer-types.js';
import { error, type Diagnostic } from './diagnostics.js';
import { MinHeap } from './min-heap.js';
import { label } from './recipe-schema.js';
import type { PathPart, SourceFile } from './source.js';

interface Edge {
  to: string;
  kind: 'refers' | 'needs';
  path: PathPart[];
}

const describeEdge = (edge: Edge) =>
  edge.kind === 'refers' ? `${label(edge.path)} refers to steps.${edge.to}` : `${label(edge.path)} names ${edge.to}`;

/**
 * Kahn's algorithm, taking ready steps in file order (a heap of file positions keeps it
 * O(E + V log V)); a cycle is reported with each of its edges and where it is written.
 */
export function topologicalOrder(
  drafts: StepDraft[],
  byId: Map<string, StepDraft>,
  file: SourceFile,
  diagnostics: Diagnostic[],
): StepDraft[] | undefined {
  // Steps by their index in the file: arrays of numbers, not maps of names, keep 100,000 steps quick.
  const position = new Map<string, number>();
  for (let i = 0; i < drafts.length; i++) position.set(drafts[i]!.id, i);
  const remaining = new Int32Array(drafts.length);
  const dependants: number[][] = Array.from({ length: drafts.length }, () => []);
  for (let i = 0; i < drafts.length; i++) {
    const draft = drafts[i]!;
    // Each step it waits for counts once, however many times it is named.
    const waitsFor = new Set<number>();
    for (const { step } of draft.references) if (step !== draft.id) addIndex(position, step, waitsFor);
    for (const { step } of draft.needs) if (step !== draft.id) addIndex(position, step, waitsFor);
    for (const to of waitsFor) dependants[to]!.push(i);
    remaining[i] = waitsFor.size;
  }
  const ready = new MinHeap();
  for (let i = 0; i < drafts.length; i++) if (remaining[i] === 0) ready.push(i);
  const order: StepDraft[] = [];
  while (ready.size > 0) {
    const index = ready.pop();
    order.push(drafts[index]!);
    for (const next of dependants[index]!) if (--remaining[next]! === 0) ready.push(next);
  }
  if (order.length === drafts.length) return order;
  // The edges with their places in the file, for the cycle's message only.
  const edges = new Map<string, Edge[]>();
  for (const draft of drafts) {
    const out: Edge[] = [];
    for (const ref of draft.references)
      if (byId.has(ref.step) && ref.step !== draft.id) out.push({ to: ref.step, kind: 'refers', path: ref.path });
    for (const need of draft.needs)
      if (byId.has(need.step) && need.step !== draft.id) out.push({ to: need.step, kind: 'needs', path: need.path });
    edges.set(draft.id, out);
  }
  // Every step left waits on a cycle or on a step in one; walk from each to find its cycle.
  const done = new Set(order.map((d) => d.id));
  const stuck = new Set(drafts.filter((d) => !done.has(d.id)).map((d) => d.id));
  // Each stuck step's first edge into the stuck set makes a graph where every walk ends in a cycle.
  // A walk stops at a step an earlier walk passed, whose cycle is found already: linear in all.
  const walked = new Set<string>();
  for (const start of stuck) {
    if (walked.has(start)) continue;
    const trail: string[] = [];
    const place = new Map<string, number>();
    let current = start;
    while (!place.has(current) && !walked.has(current)) {
      place.set(current, trail.length);
      trail.push(current);
      current = (edges.get(current) ?? []).find((e) => stuck.has(e.to))!.to;
    }
    for (const id of trail) walked.add(id);
    const cycleStart = place.get(current);
    if (cycleStart === undefined) continue;
    const cycle = trail.slice(cycleStart);
    const links = cycle.map((from, i) => (edges.get(from) ?? []).find((e) => e.to === cycle[(i + 1) % cycle.length])!);
    const described = links.map((link, i) => `${cycle[i]} → ${link.to} (${describeEdge(link)})`).join(', ');
    diagnostics.push(
      error(file, file.locateWithin(links[0]!.path, `steps.${links[0]!.to}`), `the steps form a cycle: ${described}`),
    );
  }
  return undefined;
}

/** The index of a known step, added to `into`; an unknown step is reported elsewhere. */
function addIndex(position: Map<string, number>, step: string, into: Set<number>): void {
  const index = position.get(step);
  if (index !== undefined) into.add(index);
}
