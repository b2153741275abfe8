import type { ReportData, TrafficSecond } from './data.js';
import { colourOf, html, seconds, type Html } from './html-kit.js';
import { itemLabel } from '../item-label.js';

const WIDTH = 960;
const LABEL = 130;
const LANE = 8;
const RATE_HEIGHT = 70;

interface Bar {
  start: number;
  end: number;
  status: string;
  title: string;
}

/** Bars into as few lanes as let none overlap: a step's lanes show how many of its tasks ran at once. */
export function packLanes(bars: Bar[]): Bar[][] {
  const lanes: Bar[][] = [];
  for (const bar of [...bars].sort((a, b) => a.start - b.start)) {
    const lane = lanes.find((l) => l[l.length - 1]!.end <= bar.start);
    if (lane) lane.push(bar);
    else lanes.push([bar]);
  }
  return lanes;
}

/**
 * A step's bars: one per item's task from submission to end (a retried item's last task); a step
 * without tasks is one bar. Named as everywhere else: `row 2 hero[1]`, `thumbnail`.
 */
function barsOf(step: ReportData['steps'][number], end: number, rows: number): Bar[] {
  const label = itemLabel({ step: step.step, row: step.row }, rows);
  const tasks = step.items.filter((i) => i.submittedAt !== null);
  // A step without for_each has one item, 0: its name has no index.
  const indexed = step.items.length > 1 || step.itemsFrom !== null;
  if (tasks.length === 0) {
    if (step.startedAt === null) return [];
    const stop = step.finishedAt ?? end;
    return [
      { start: step.startedAt, end: stop, status: step.status, title: `${label}: ${seconds(stop - step.startedAt)}` },
    ];
  }
  return tasks.map((item) => {
    const stop = item.finishedAt ?? end;
    const name = itemLabel({ step: step.step, row: step.row, index: indexed ? item.index : undefined }, rows);
    const title = `${name} ${item.taskId}: ${seconds(stop - item.submittedAt!)}, ${item.status}`;
    return { start: item.submittedAt!, end: stop, status: item.status, title };
  });
}

/** Where a moment falls on the x axis. */
type Scale = (t: number) => number;

/** Each step's bars in lanes under its name; answers the groups and the height they take. */
function stepGroups(data: ReportData, x: Scale, end: number): { groups: Html[]; height: number } {
  const groups: Html[] = [];
  let y = 4;
  for (const step of data.steps) {
    const lanes = packLanes(barsOf(step, end, data.summary.rows));
    if (lanes.length === 0) continue;
    const top = y;
    const bars = lanes.flatMap((lane, n) =>
      lane.map(
        (bar) => html`<rect x=${x(bar.start)} y=${top + n * LANE} width=${Math.max(1.5, x(bar.end) - x(bar.start))}
          height=${LANE - 2} fill=${colourOf(bar.status)}><title>${bar.title}</title></rect>`,
      ),
    );
    const rule = top + lanes.length * LANE + 3;
    const name = itemLabel({ step: step.step, row: step.row }, data.summary.rows);
    groups.push(html`<g class="timeline-step" data-step=${step.step}>
      <text x="4" y=${top + 9} class="axis">${name}</text>${bars}
      <line x1="0" x2=${WIDTH} y1=${rule} y2=${rule} class="rule" />
    </g>`);
    y += lanes.length * LANE + 8;
  }
  return { groups, height: y };
}

const sent = (second: TrafficSecond) => Object.values(second.counts).reduce((a: number, b) => a + (b ?? 0), 0);

/** A bar per second for the requests sent then, and a red mark over each second that saw a 429. */
function rateBars(data: ReportData, x: Scale, top: number): { bars: Html[]; busiest: number } {
  // A reduce, not Math.max(...): a run of more seconds than the stack holds arguments has as many.
  const busiest = data.traffic.reduce((most, second) => Math.max(most, sent(second)), 1);
  const start = data.summary.started_at;
  const width = Math.max(1, x(start + 1000) - x(start) - 0.5);
  const bars = data.traffic.map((t) => {
    const count = sent(t);
    const h = (count / busiest) * (RATE_HEIGHT - 12);
    const limited = t.rateLimited ? `, ${t.rateLimited} × 429` : '';
    const title = `${new Date(t.second).toISOString().slice(11, 19)}: ${count} requests${limited}`;
    const mark = `M${x(Math.max(start, t.second)) + width / 2},${top + 2} l4,-7 l-8,0 z`;
    return html`<g>
      <rect x=${x(Math.max(start, t.second))} y=${top + RATE_HEIGHT - h} width=${width} height=${h} class="rate">
        <title>${title}</title>
      </rect>
      ${t.rateLimited > 0 ? html`<path class="throttled" d=${mark}><title>${title}</title></path>` : null}
    </g>`;
  });
  return { bars, busiest };
}

/**
 * Every task as a bar from submission to end, grouped by step, and beneath them the requests sent
 * each second with the 429s marked in red: how the scheduler spent the budget.
 */
export function timelineSvg(data: ReportData): Html {
  const start = data.summary.started_at;
  const lastEvent = Math.max(
    start + 1000,
    ...data.steps.map((s) => s.finishedAt ?? 0),
    ...data.traffic.map((t) => t.second + 1000),
  );
  const end = data.summary.finished_at ?? lastEvent;
  const span = Math.max(1000, end - start);
  const x: Scale = (t) => LABEL + ((t - start) / span) * (WIDTH - LABEL - 10);
  const { groups, height: stepsHeight } = stepGroups(data, x, end);
  const rateTop = stepsHeight + 14;
  const { bars, busiest } = rateBars(data, x, rateTop);
  const axis = rateTop + RATE_HEIGHT;
  const height = axis + 18;
  // The time between a stop and its resume is on the axis (the bars keep their clock times), but not
  // in the run's time the page's header gives: shaded, and said at the axis's end.
  const pauses = (data.pauses ?? []).filter((p) => p.to > p.from && p.from < end);
  const paused = pauses.reduce((sum, p) => sum + Math.min(p.to, end) - p.from, 0);
  const shades = pauses.map(
    (p) => html`<rect class="paused" x=${x(p.from)} y="0" width=${Math.max(1, x(Math.min(p.to, end)) - x(p.from))}
      height=${axis}><title>${`paused between sessions: ${seconds(p.to - p.from)}`}</title></rect>`,
  );
  return html`<svg class="timeline" width=${WIDTH} height=${height} viewBox=${`0 0 ${WIDTH} ${height}`}
    role="img" aria-label="timeline">
    ${shades}${groups}
    <text x="4" y=${rateTop + 12} class="axis">requests/s</text>
    <text x="4" y=${rateTop + 26} class="axis muted">max ${busiest}</text>
    ${bars}
    <line x1=${LABEL} x2=${WIDTH - 10} y1=${axis} y2=${axis} class="rule" />
    <text x=${LABEL} y=${height - 3} class="axis">0 s</text>
    <text x=${WIDTH - 10} y=${height - 3} class="axis" text-anchor="end">${seconds(span)}${paused > 0 ? ` (${seconds(paused)} of it paused between sessions)` : ''}</text>
  </svg>`;
}
