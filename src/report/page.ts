import { relative, sep } from 'node:path';

import { cardOf } from '../actions/cards.js';
import type { ReportData, ReportFile, ReportItem, ReportStep } from './data.js';
import { dagSvg } from './dag-svg.js';
import { colourOf, escapeHtml, html, seconds, type Html } from './html-kit.js';
import { SCRIPT, STYLE } from './page-assets.js';
import { timelineSvg } from './timeline-svg.js';
import { notListedLine, spendFigures } from '../store/summary.js';
import { plural } from '../format.js';
import { itemLabel } from '../item-label.js';

/** What the page needs besides the data: where it will be written, and the thumbnails by file path. */
export interface PageContext {
  /** The folder the page is written to: files are linked relative to it. */
  dir: string;
  thumbs: Map<string, string | null>;
  /** Images past the thumbnail limit: linked only. */
  unthumbed?: number;
}

/** Past this many items a gallery's cards off screen are not laid out until scrolled to: a large report opens fast. */
const LARGE_GRID = 60;

const when = (ms: number) => new Date(ms).toISOString().replace('T', ' ').slice(0, 19);
const href = (ctx: PageContext, path: string) => relative(ctx.dir, path).split(sep).map(encodeURIComponent).join('/');
const json = (value: unknown) => JSON.stringify(value, null, 2);

/** The item's prompt; none for an input without one (a video's references), whose input is folded alone. */
function promptOf(item: ReportItem): string {
  return typeof item.input?.prompt === 'string' ? item.input.prompt : '';
}

function fileView(ctx: PageContext, file: ReportFile, alt: string): Html {
  const link = href(ctx, file.path);
  // `#t=0.1`: the browser shows the first frame, not a black box, before the video is played.
  if (file.kind === 'video') return html`<video controls preload="metadata" src=${`${link}#t=0.1`}></video>`;
  if (file.kind === 'audio') return html`<audio controls preload="none" src=${link}></audio>`;
  const thumb = file.kind === 'image' ? ctx.thumbs.get(file.path) : null;
  if (thumb) {
    return html`<a class="full" href=${link} title="show the full image">
      <img src=${thumb} alt=${alt} decoding="async" />
    </a>`;
  }
  return html`<a href=${link}>${link}</a>`;
}

/** `from the cache of run … (2026-11-28 13:02:11 UTC)`: where a cached output was made, as far as the entry knows. */
function cachedText(item: ReportItem): string {
  const from = item.cachedFrom;
  if (!from) return 'from the cache';
  return `from the cache${from.run ? ` of run ${from.run}` : ''} (${when(from.at)} UTC)`;
}

function card(ctx: PageContext, step: ReportStep, item: ReportItem): Html {
  const prompt = promptOf(item);
  const took =
    item.submittedAt !== null && item.finishedAt !== null ? seconds(item.finishedAt - item.submittedAt) : null;
  const facts = [
    // Which item it is (`hero[1]`): output files are numbered from 1, the recipe's items from 0.
    (step.items.length > 1 || item.index > 0) && itemLabel({ step: step.step, index: item.index }),
    item.from && `from ${item.from}`,
    item.cached && cachedText(item),
    item.taskId,
    took,
    item.polls !== null && plural(item.polls, 'poll'),
  ];
  const text = `${item.input ? JSON.stringify(item.input) : ''} ${item.taskId ?? ''}`.toLowerCase();
  const output = item.output !== undefined && item.files.length === 0 && !item.taskId ? item.output : undefined;
  return html`<div class=${`card ${item.status}`} data-step=${step.step} data-status=${item.status} data-text=${text}>
    ${item.files.map((f) => fileView(ctx, f, prompt.slice(0, 120)))}
    ${prompt ? html`<div class="prompt">${prompt}</div>` : null}
    ${item.input ? html`<details><summary>input</summary><pre>${json(item.input)}</pre></details>` : null}
    <div class="facts">
      ${badge(item.status)}${' '}${facts.filter(Boolean).join(' · ')}
    </div>
    ${item.error ? html`<div class="error">${item.error}</div>` : null}
    ${outputView(step.action, output)}
  </div>`;
}

const badge = (status: string, id?: string) =>
  html`<span class="badge" id=${id} style=${`background:${colourOf(status)}`}>${status}</span>`;

/** An item's (or a step's) outputs as its action shows them, else as JSON. */
function outputView(action: string | null, output: unknown): Html | null {
  if (output === undefined || output === null) return null;
  return cardOf(action).view(output) ?? html`<details><summary>outputs</summary><pre>${json(output)}</pre></details>`;
}

function stepSection(ctx: PageContext, step: ReportStep, rows: number): Html {
  const name = `${step.step}${rows > 1 ? ` · row ${step.row + 1}` : ''}`;
  const media = cardOf(step.action).media;
  const mediaItems = step.items.filter((i) => i.taskId !== null || i.files.length > 0 || media);
  const otherItems = step.items.filter((i) => !mediaItems.includes(i));
  const items = [...mediaItems, ...otherItems];
  const took = step.durationMs !== null ? ` · ${seconds(step.durationMs)}` : '';
  const count = items.length > 0 ? ` · ${plural(items.length, 'item')}` : '';
  const grid = html`<div class=${items.length > LARGE_GRID ? 'grid large' : 'grid'}>
    ${items.map((i) => card(ctx, step, i))}
  </div>`;
  return html`<section class="step" data-step=${step.step} data-status=${step.status}>
    <h2>${name} ${badge(step.status)}<span class="meta"> ${step.model ?? step.action ?? ''}${took}${count}</span></h2>
    ${step.error ? html`<div class="error">${step.error}</div>` : null}
    ${step.cancelledBecause ? html`<div class="reason">cancelled: ${step.cancelledBecause}</div>` : null}
    ${items.length > 0 ? grid : null}
    ${!media && items.length === 0 ? outputView(step.action, step.output) : null}
  </section>`;
}

/**
 * Steps whose items flow from another step's items, grouped with the step their lineage begins
 * at, in the order of the run: `t2i → edit → v2v`, one chain per row of the batch.
 */
function chainsOf(steps: ReportStep[]): ReportStep[][] {
  const byKey = new Map(steps.map((s) => [`${s.row}/${s.step}`, s]));
  const upstream = (s: ReportStep) => (s.itemsFrom ? byKey.get(`${s.row}/${s.itemsFrom}`) : undefined);
  const chains = new Map<ReportStep, ReportStep[]>();
  for (const step of steps) {
    let root = step;
    for (let up = upstream(root), hops = 0; up && hops < steps.length; up = upstream(root), hops++) root = up;
    if (root === step) continue;
    chains.set(root, [...(chains.get(root) ?? [root]), step]);
  }
  return [...chains.values()];
}

/**
 * The chain as its paths from the step it begins at to each step nothing in it follows:
 * `t2i → edit → v2v`, and for a fork `t2i → edit → video, t2i → fallback` rather than one line.
 */
function chainPaths(chain: ReportStep[]): string[] {
  const byName = new Map(chain.map((s) => [s.step, s]));
  const followed = new Set(chain.map((s) => s.itemsFrom).filter((from) => from !== undefined && from !== null));
  return chain
    .filter((s) => s !== chain[0] && !followed.has(s.step))
    .map((leaf) => {
      const path = [leaf.step];
      for (let at = leaf; at.itemsFrom && byName.has(at.itemsFrom) && path.length <= chain.length; ) {
        at = byName.get(at.itemsFrom)!;
        path.unshift(at.step);
      }
      return path.join(' → ');
    });
}

/** The chain's steps, each followed by the steps that follow it, depth first: a fork's branches side by side, each whole. */
function depthFirst(chain: ReportStep[]): ReportStep[] {
  const ordered: ReportStep[] = [];
  const visit = (step: ReportStep) => {
    ordered.push(step);
    for (const next of chain) if (next.itemsFrom === step.step && next !== chain[0]) visit(next);
  };
  visit(chain[0]!);
  // A step the walk missed (its upstream outside the chain's rows) keeps its place at the end.
  return [...ordered, ...chain.filter((s) => !ordered.includes(s))];
}

/** An item's chain on one row: the prompt's image, its edit, the edit's video… (a gap where an item is missing). */
function chainSection(ctx: PageContext, steps: ReportStep[], rows: number): Html {
  const chain = depthFirst(steps);
  const first = chain[0]!;
  // A reduce, not Math.max(...): a step can have more items than the stack holds arguments.
  const count = chain.reduce((most, s) => s.items.reduce((m, i) => Math.max(m, i.index + 1), most), 0);
  const byIndex = chain.map((s) => new Map(s.items.map((i) => [i.index, i])));
  const columns = `grid-template-columns:repeat(${chain.length},minmax(0,1fr))`;
  const name = `${chainPaths(chain).join(', ')}${rows > 1 ? ` · row ${first.row + 1}` : ''}`;
  return html`<section class=${count > LARGE_GRID ? 'step chain large' : 'step chain'} data-step=${first.step}
    data-steps=${chain.map((s) => s.step).join(' ')}>
    <h2>${name}<span class="meta"> · ${plural(count, 'item chain')}, one a line</span></h2>
    ${chain.filter((s) => s.error).map((s) => html`<div class="error">${s.step}: ${s.error}</div>`)}
    ${chain.filter((s) => s.cancelledBecause).map((s) => html`<div class="reason">${s.step} cancelled: ${s.cancelledBecause}</div>`)}
    <div class="chain-row chain-head" style=${columns}>
      ${chain.map((s) => html`<div>${s.step} ${badge(s.status)}<span class="meta"> ${s.model ?? s.action ?? ''}</span></div>`)}
    </div>
    ${Array.from(
      { length: count },
      (_, index) => html`<div class="chain-row" style=${columns}>
        ${chain.map((s, column) => {
          const item = byIndex[column]!.get(index);
          return item ? card(ctx, s, item) : html`<div></div>`;
        })}
      </div>`,
    )}
  </section>`;
}

/**
 * A batch as one section, a line per row and a column per step (in the recipe's order): a row's
 * image, its edit and its video side by side, as someone picking results reads them. A step with
 * several items in a row (a `for_each`) has them all in its cell; one that made none says why.
 */
function batchSection(ctx: PageContext, data: ReportData): Html {
  const present = new Set(data.steps.map((s) => s.step));
  const order = data.dag.length > 0 ? data.dag.map((d) => d.id) : [...present];
  const columns = [...order.filter((id) => present.has(id)), ...[...present].filter((id) => !order.includes(id))];
  const byRow = new Map<number, Map<string, ReportStep>>();
  for (const step of data.steps) {
    const row = byRow.get(step.row) ?? new Map<string, ReportStep>();
    row.set(step.step, step);
    byRow.set(step.row, row);
  }
  const grid = `grid-template-columns:5em repeat(${columns.length},minmax(0,1fr))`;
  const cell = (step: ReportStep | undefined): Html => {
    if (!step) return html`<div></div>`;
    if (step.items.length > 0) return html`<div class="cell">${step.items.map((item) => card(ctx, step, item))}</div>`;
    return html`<div class="cell">${badge(step.status)}
      ${step.error ? html`<div class="error">${step.error}</div>` : null}
      ${step.cancelledBecause ? html`<div class="reason">${step.cancelledBecause}</div>` : null}
      ${cardOf(step.action).media ? null : outputView(step.action, step.output)}</div>`;
  };
  const rows = [...byRow].sort(([a], [b]) => a - b);
  return html`<section class=${rows.length > LARGE_GRID ? 'step chain batch large' : 'step chain batch'}
    data-steps=${columns.join(' ')}>
    <h2>${plural(rows.length, 'row')}<span class="meta"> · one a line, a step a column</span></h2>
    <div class="chain-row chain-head" style=${grid}><div>row</div>${columns.map((id) => html`<div>${id}</div>`)}</div>
    ${rows.map(
      ([row, steps]) => html`<div class="chain-row" data-row=${row + 1} style=${grid}>
        <div class="row-label">row ${row + 1}</div>${columns.map((id) => cell(steps.get(id)))}
      </div>`,
    )}
  </section>`;
}

/**
 * The steps' sections: a batch's rows as one section, a row a line; else a chain of steps that
 * flow item by item as one section, an item a line, and every other step as its own.
 */
function stepSections(ctx: PageContext, data: ReportData): Html[] {
  if (data.summary.rows > 1) return [batchSection(ctx, data)];
  const chains = chainsOf(data.steps);
  const inChain = new Map(chains.flatMap((chain) => chain.map((s) => [s, chain] as const)));
  const sections: Html[] = [];
  for (const step of data.steps) {
    const chain = inChain.get(step);
    if (!chain) sections.push(stepSection(ctx, step, data.summary.rows));
    else if (chain[0] === step) sections.push(chainSection(ctx, chain, data.summary.rows));
  }
  return sections;
}

function header(data: ReportData): Html {
  const { summary, totals } = data;
  const r = totals.requests;
  const cells: Array<[string, string | number]> = [
    ['tasks', totals.tasks],
    ['files', totals.files],
    [
      'requests',
      [
        plural(r.submit, 'submission'),
        plural(r.poll, 'poll'),
        plural(r.upload, 'upload'),
        plural(r.tool, 'tool call'),
        plural(r.text, 'text call'),
        ...(r.other ? [`${r.other} other`] : []),
      ].join(' · '),
    ],
    ['429s', totals.rateLimited],
  ];
  if (totals.cacheHits !== null) cells.push(['cache hits', totals.cacheHits]);
  cells.push(['spent', spendFigures(summary.cost)]);
  const took = summary.duration_ms === null ? 'not finished' : `took ${seconds(summary.duration_ms)}`;
  return html`<header>
    <h1>${summary.name} ${badge(summary.status, 'run-status')}</h1>
    <div class="meta">
      <span>run ${summary.run_id}</span><span>recipe ${summary.recipe}</span>
      <span>started ${when(summary.started_at)} UTC</span><span>${took}</span>
      <span>${plural(summary.rows, 'row')}</span>
    </div>
    <table class="totals"><tbody>
      ${cells.map(([k, v]) => html`<tr><td>${k}</td><td data-total=${k}>${v}</td></tr>`)}
    </tbody></table>
  </header>`;
}

function controls(data: ReportData): Html {
  const steps = [...new Set(data.steps.map((s) => s.step))];
  return html`<div class="controls">
    <select id="f-step" aria-label="step">
      <option value="">all steps</option>${steps.map((s) => html`<option value=${s}>${s}</option>`)}
    </select>
    <select id="f-status" aria-label="status"><option value="">any status</option>
      ${['succeeded', 'failed', 'skipped', 'running', 'unknown'].map((s) => html`<option value=${s}>${s}</option>`)}</select>
    <input id="f-text" type="search" placeholder="search prompts" aria-label="search prompts" />
    <span id="f-shown" class="meta"></span></div>`;
}

const unthumbedNote = (ctx: PageContext) =>
  `${ctx.unthumbed} images past the first ${ctx.thumbs.size} are linked without a thumbnail.`;

/** The whole report as one HTML document. */
export function renderPage(data: ReportData, ctx: PageContext): string {
  const dag = dagSvg(data);
  // A big batch shows its first rows and every step that did not succeed; the rest are counted.
  const notListed = notListedLine(data.summary);
  const body = html`<body>${header(data)}<main>
    ${dag ? html`<h2>Steps</h2><div class="scroll">${dag}</div>` : null}
    <h2>Timeline</h2><div class="scroll">${timelineSvg(data)}</div>
    <h2>Outputs</h2>${controls(data)}
    ${ctx.unthumbed ? html`<p class="meta">${unthumbedNote(ctx)}</p>` : null}
    ${stepSections(ctx, data)}
    ${notListed ? html`<p class="meta" id="not-listed">${notListed}</p>` : null}
  </main><div id="lightbox"><img alt="full size" /></div>
  <script dangerouslySetInnerHTML=${{ __html: SCRIPT }}></script></body>`;
  const csp =
    "default-src 'none'; img-src 'self' data:; media-src 'self'; style-src 'unsafe-inline'; script-src 'unsafe-inline'";
  const title = escapeHtml(`${data.summary.name} · ${data.summary.run_id}`);
  return `<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width,initial-scale=1"><title>${title}</title>
<style>${STYLE}</style></head>${body.text}</html>\n`;
}
