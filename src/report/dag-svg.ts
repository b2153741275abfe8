import type { ReportData } from './data.js';
import { colourOf, html, type Html } from './html-kit.js';

const BOX = { width: 150, height: 38, dx: 190, dy: 54 };

/** A label cut to what fits in a box; the box's tooltip has it whole. */
const fit = (text: string) => (text.length > 22 ? `${text.slice(0, 21)}…` : text);

const STATUS_ORDER = ['failed', 'cancelled', 'running', 'pending'];

/** How many rows of each step ended in each status. */
function statusCounts(data: ReportData): Map<string, Map<string, number>> {
  const counts = new Map<string, Map<string, number>>();
  for (const s of data.steps) {
    const step = counts.get(s.step) ?? new Map<string, number>();
    step.set(s.status, (step.get(s.status) ?? 0) + 1);
    counts.set(s.step, step);
  }
  return counts;
}

/**
 * A step's status over every row: failed wins, then cancelled (it did not run where it should
 * have), then running, then any not done yet; skipped where every row skipped it, else succeeded.
 */
function statusOver(counts: ReadonlyMap<string, number>): string {
  const first = STATUS_ORDER.find((status) => counts.has(status));
  return first ?? ([...counts.keys()].every((s) => s === 'skipped') ? 'skipped' : 'succeeded');
}

/**
 * In a batch, how a step went over its rows: `9 of 10 rows succeeded, 1 cancelled`, and `9/10` for
 * the box. The colour is the worst status, which alone said `cancelled` for a step that one row of
 * ten cancelled. A batch's later rows list only the steps that did not succeed: once the run has
 * ended, the rows a step did not list as anything else succeeded. Undefined for one row.
 */
function rowCounts(
  data: ReportData,
  counts: ReadonlyMap<string, number>,
): { title: string; badge: string } | undefined {
  const rows = data.summary.rows;
  if (rows <= 1) return undefined;
  const others = [...counts].filter(([status]) => status !== 'succeeded');
  const ended = data.summary.status !== 'running';
  const succeeded = ended ? rows - others.reduce((sum, [, n]) => sum + n, 0) : (counts.get('succeeded') ?? 0);
  const rest = others.map(([status, n]) => `, ${n} ${status}`).join('');
  return { title: `${succeeded} of ${rows} rows succeeded${rest}`, badge: `${succeeded}/${rows}` };
}

/**
 * Each step's column: one past the deepest step it depends on (a dependency outside the DAG counts
 * as column 0). Steps are taken once all they depend on is placed (Kahn's order), so neither a
 * chain of 100,000 steps nor their order in the list makes a recursion that deep or a search per
 * step; a step in a cycle, which a recipe cannot have, stays in column 0.
 */
function layers(dag: ReportData['dag']): Map<string, number> {
  const known = new Set(dag.map((node) => node.id));
  const waiting = new Map<string, number>();
  const dependents = new Map<string, string[]>();
  for (const node of dag) {
    const inside = node.depends_on.filter((d) => known.has(d) && d !== node.id);
    waiting.set(node.id, inside.length);
    for (const d of inside) {
      const list = dependents.get(d) ?? [];
      list.push(node.id);
      dependents.set(d, list);
    }
  }
  const layer = new Map<string, number>();
  for (const node of dag) layer.set(node.id, node.depends_on.some((d) => !known.has(d)) ? 1 : 0);
  const ready = dag.filter((node) => waiting.get(node.id) === 0).map((node) => node.id);
  while (ready.length > 0) {
    const id = ready.pop()!;
    for (const next of dependents.get(id) ?? []) {
      layer.set(next, Math.max(layer.get(next)!, layer.get(id)! + 1));
      const left = waiting.get(next)! - 1;
      waiting.set(next, left);
      if (left === 0) ready.push(next);
    }
  }
  return layer;
}

/** The largest of the values, at least 0: a loop, since spread arguments go on the stack. */
function largest(values: Iterable<number>): number {
  let most = 0;
  for (const value of values) if (value > most) most = value;
  return most;
}

/** The recipe's steps as boxes in columns by dependency depth, each filled with its status's colour. */
export function dagSvg(data: ReportData): Html | null {
  const dag =
    data.dag.length > 0
      ? data.dag
      : [...new Set(data.steps.map((s) => s.step))].map((id): ReportData['dag'][number] => ({
          id,
          action: '',
          depends_on: [],
        }));
  if (dag.length === 0) return null;
  const layer = layers(dag);
  const rowsUsed = new Map<number, number>();
  const at = new Map<string, { x: number; y: number }>();
  for (const node of dag) {
    const column = layer.get(node.id) ?? 0;
    const row = rowsUsed.get(column) ?? 0;
    rowsUsed.set(column, row + 1);
    at.set(node.id, { x: 10 + column * BOX.dx, y: 10 + row * BOX.dy });
  }
  const width = 20 + largest(layer.values()) * BOX.dx + BOX.width;
  const height = 20 + (largest(rowsUsed.values()) - 1) * BOX.dy + BOX.height;
  const edges = dag.flatMap((node) =>
    node.depends_on
      .filter((d) => at.has(d))
      .map((dep) => {
        const from = at.get(dep)!;
        const to = at.get(node.id)!;
        const [x1, y1, x2, y2] = [from.x + BOX.width, from.y + BOX.height / 2, to.x, to.y + BOX.height / 2];
        const curve = `M${x1},${y1} C${x1 + 30},${y1} ${x2 - 30},${y2} ${x2 - 4},${y2}`;
        return html`<path d=${curve} class="edge" marker-end="url(#arrow)" />`;
      }),
  );
  const counted = statusCounts(data);
  const boxes = dag.map((node) => {
    const { x, y } = at.get(node.id)!;
    const counts = counted.get(node.id);
    const status = counts ? statusOver(counts) : 'pending';
    const batch = counts && rowCounts(data, counts);
    const kind = node.model?.split('/').pop() ?? node.action;
    return html`<g class="dag-node" data-step=${node.id} data-status=${status}>
      <title>${`${node.id}: ${batch?.title ?? status}${node.model ? ` (${node.model})` : ''}`}</title>
      <rect x=${x} y=${y} width=${BOX.width} height=${BOX.height} rx="6" fill=${colourOf(status)} />
      <text x=${x + 8} y=${y + 16} class="dag-id">${node.id}${batch ? ` · ${batch.badge}` : ''}</text>
      <text x=${x + 8} y=${y + 30} class="dag-kind">${fit(kind)}</text>
    </g>`;
  });
  return html`<svg class="dag" width=${width} height=${height} viewBox=${`0 0 ${width} ${height}`}
    role="img" aria-label="recipe steps">
    <defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto">
      <path d="M0,0 L10,5 L0,10 z" fill="#666" /></marker></defs>
    ${edges}${boxes}
  </svg>`;
}
