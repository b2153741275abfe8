import type { ReportData } from './data.js';
import { colourOf, html, type Html } from './html-kit.js';

const BOX = { width: 150, height: 38, dx: 190, dy: 54 };

/** A label cut to what fits in a box; the box's tooltip has it whole. */
const fit = (text: string) => (text.length > 22 ? `${text.slice(0, 21)}…` : text);

/** A step's status over every row: failed wins, then running, then any not done yet. */
function stepStatus(data: ReportData, id: string): string {
  const statuses = data.steps.filter((s) => s.step === id).map((s) => s.status);
  if (statuses.length === 0) return 'pending';
  for (const status of ['failed', 'running', 'pending']) if (statuses.includes(status)) return status;
  return statuses.every((s) => s === 'skipped') ? 'skipped' : 'succeeded';
}

/** Each step's column: one past the deepest step it depends on. */
function layers(dag: ReportData['dag']): Map<string, number> {
  const layer = new Map<string, number>();
  const depth = (id: string, seen: Set<string>): number => {
    const known = layer.get(id);
    if (known !== undefined) return known;
    if (seen.has(id)) return 0;
    seen.add(id);
    const node = dag.find((d) => d.id === id);
    const value = node && node.depends_on.length > 0 ? 1 + Math.max(...node.depends_on.map((d) => depth(d, seen))) : 0;
    layer.set(id, value);
    return value;
  };
  for (const node of dag) depth(node.id, new Set());
  return layer;
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
  const width = 20 + Math.max(...[...layer.values()]) * BOX.dx + BOX.width;
  const height = 20 + (Math.max(...rowsUsed.values()) - 1) * BOX.dy + BOX.height;
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
  const boxes = dag.map((node) => {
    const { x, y } = at.get(node.id)!;
    const status = stepStatus(data, node.id);
    return html`<g class="dag-node" data-step=${node.id} data-status=${status}>
      <title>${`${node.id}: ${status}${node.model ? ` (${node.model})` : ''}`}</title>
      <rect x=${x} y=${y} width=${BOX.width} height=${BOX.height} rx="6" fill=${colourOf(status)} />
      <text x=${x + 8} y=${y + 16} class="dag-id">${node.id}</text>
      <text x=${x + 8} y=${y + 30} class="dag-kind">${fit(node.model?.split('/').pop() ?? node.action)}</text>
    </g>`;
  });
  return html`<svg class="dag" width=${width} height=${height} viewBox=${`0 0 ${width} ${height}`}
    role="img" aria-label="recipe steps">
    <defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto">
      <path d="M0,0 L10,5 L0,10 z" fill="#666" /></marker></defs>
    ${edges}${boxes}
  </svg>`;
}
