import { afterEach, describe, expect, it } from 'vitest';
import { ConsoleReporter } from '../../src/engine/reporter.js';
import {
  startLocalGateway,
  type Fault,
  type LocalGateway,
  type LocalGatewayOptions,
} from '../../src/local-gateway/index.js';
import { summarise } from '../../src/store/summary.js';
import { engineFor } from '../support/engine.js';
import { ManualClock } from '../support/manual-clock.js';
import { runPlanSkippingTime } from '../support/run-engine.js';

const SUBMIT = 'POST /api/v1/{provider}/{model_id}';
const IMAGE = `version: 1
name: one-image
steps:
  image:
    uses: vendor-a/vendor-a-v3-t2i
    retry: { attempts: 0 }
    with: { prompt: a lighthouse }
`;
const UPLOAD = `version: 1
name: one-upload
steps:
  logo:
    uses: upload
    with: { path: ./assets/logo.png }
`;

let gateway: LocalGateway | undefined;
afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
});

interface Case {
  name: string;
  recipe?: string;
  gateway?: LocalGatewayOptions;
  fault?: Fault;
  timeoutMs?: number;
  reason: string;
  outcomeUnknown: boolean;
  message: RegExp;
}

const CASES: Case[] = [
  {
    name: '400 invalid parameters',
    fault: { kind: 'status', status: 400, route: SUBMIT },
    reason: 'invalid-parameters',
    outcomeUnknown: false,
    message: /^submission of image to vendor-a\/vendor-a-v3-t2i: HTTP 400: Invalid parameters: injected fault 400$/,
  },
  {
    name: '401 authentication',
    fault: { kind: 'status', status: 401, route: SUBMIT },
    reason: 'unauthorized',
    outcomeUnknown: false,
    message: /HTTP 401: Authentication failed/,
  },
  {
    name: '402 insufficient balance',
    gateway: { balanceUsd: 0.01 },
    reason: 'insufficient-balance',
    outcomeUnknown: false,
    message: /HTTP 402: Insufficient balance: this task costs \$0\.0300 and the team balance is \$0\.0100$/,
  },
  {
    name: '404 on the task read',
    fault: { kind: 'status', status: 404, route: 'GET /api/v1/tasks/{task_id}' },
    reason: 'not-found',
    outcomeUnknown: false,
    message: /^reading task task_[0-9a-f]+: HTTP 404: Not found/,
  },
  {
    name: '413 on an upload',
    recipe: UPLOAD,
    gateway: { teamQuotaBytes: 10 },
    reason: 'payload-too-large',
    outcomeUnknown: false,
    message: /^upload of .*logo\.png: HTTP 413: Payload too large: the team's upload quota/,
  },
  {
    name: '500 on a submission',
    fault: { kind: 'status', status: 500, route: SUBMIT },
    reason: 'outcome-unknown',
    outcomeUnknown: true,
    message:
      /may or may not have been accepted \(HTTP 500: Internal server error: injected fault 500\); it was not sent again\. Check the team's tasks in the gateway's dashboard \(its API lists none\) and its balance \(`pipeline account`\)/,
  },
  {
    name: '503 on a submission',
    fault: { kind: 'status', status: 503, route: SUBMIT },
    reason: 'outcome-unknown',
    outcomeUnknown: true,
    message: /HTTP 503: Service unavailable/,
  },
  {
    name: 'a dropped connection',
    fault: { kind: 'drop-after', route: SUBMIT },
    reason: 'outcome-unknown',
    outcomeUnknown: true,
    message: /the connection closed before the answer was complete/,
  },
  {
    name: 'a timeout',
    fault: { kind: 'delay', delay_ms: 2500, route: SUBMIT },
    timeoutMs: 500,
    reason: 'outcome-unknown',
    outcomeUnknown: true,
    message: /no answer within 500 ms/,
  },
  {
    name: 'malformed JSON',
    fault: { kind: 'malformed-json', route: SUBMIT },
    reason: 'outcome-unknown',
    outcomeUnknown: true,
    message: /answered HTTP 200 with a body that is not valid JSON/,
  },
  {
    name: 'a task that ends failed',
    gateway: { failRate: 1 },
    reason: 'task-failed',
    outcomeUnknown: false,
    message:
      /^task task_[0-9a-f]+ of image ended failed: Internal server error: the model could not generate an output for this input$/,
  },
];

describe('every failure class surfaces as a clear step failure', () => {
  it.each(CASES.map((c) => [c.name, c] as const))('%s: in the console, the journal and runs show', async (_name, c) => {
    const clock = new ManualClock();
    gateway = await startLocalGateway({ clock, latencyScale: 0, seed: 1, ...c.gateway });
    if (c.fault) gateway.injectFault(c.fault);
    let console = '';
    const report = new ConsoleReporter(
      (text) => (console += text),
      () => Date.now(),
    );
    const engine = await engineFor(c.recipe ?? IMAGE, gateway, clock, {
      report,
      ...(c.timeoutMs ? { client: { timeouts: { headersMs: c.timeoutMs } } } : {}),
    });
    const result = await runPlanSkippingTime(engine, gateway, clock);
    const step = Object.values(result.rows[0]!.steps)[0]!;
    // Money (a 402) stops a run; every other failure fails it.
    expect(result.status).toBe(c.reason === 'insufficient-balance' ? 'stopped' : 'failed');
    expect(step.status).toBe('failed');
    expect(step.failure).toMatchObject({ reason: c.reason, outcomeUnknown: c.outcomeUnknown });
    expect(step.failure!.message).toMatch(c.message);
    // The console: one line that names the step and says why.
    expect(console).toContain(`✗ ${c.recipe ? 'logo' : 'image'} failed: ${step.failure!.message}`);
    // The journal: the failure, its reason, and whether money may be in doubt.
    const events = engine.events();
    expect(events.filter((e) => e.type === 'step-failed')).toEqual([
      expect.objectContaining({ reason: c.reason, message: step.failure!.message, outcome_unknown: c.outcomeUnknown }),
    ]);
    // `runs show` reads the same journal.
    const summary = summarise([
      { type: 'run-started', t: 0, run_id: 'r', recipe: 'x', name: 'x', rows: [{}], sets: [], batch: null },
      ...events,
    ]);
    expect(summary.steps[0]).toMatchObject({
      status: 'failed',
      error: { reason: c.reason, message: step.failure!.message, outcome_unknown: c.outcomeUnknown },
    });
    await engine.close();
  });

  it('never sends a submission twice after an unknown outcome', async () => {
    const clock = new ManualClock();
    gateway = await startLocalGateway({ clock, latencyScale: 0, seed: 1 });
    gateway.injectFault({ kind: 'drop-after', route: SUBMIT });
    const engine = await engineFor(IMAGE.replace('attempts: 0', 'attempts: 3'), gateway, clock);
    const result = await runPlanSkippingTime(engine, gateway, clock);
    expect(result.rows[0]!.steps.image!.failure?.reason).toBe('outcome-unknown');
    expect(gateway.stats().requests.by_route[SUBMIT]).toBe(1);
    await engine.close();
  });

  it.each([
    ['retries a failed task by default', 'attempts: 2, backoff: 10ms', 3],
    [
      'does not retry a reason the step lists in non_retryable',
      'attempts: 2, backoff: 10ms, non_retryable: [task-failed]',
      1,
    ],
    ['retries a reason it does not list', 'attempts: 2, backoff: 10ms, non_retryable: [invalid-output]', 3],
  ])('%s', async (_name, retry, submissions) => {
    const clock = new ManualClock();
    gateway = await startLocalGateway({ clock, latencyScale: 0, seed: 1, failRate: 1 });
    const engine = await engineFor(IMAGE.replace('attempts: 0', retry), gateway, clock);
    const result = await runPlanSkippingTime(engine, gateway, clock);
    expect(result.rows[0]!.steps.image!.failure?.reason).toBe('task-failed');
    expect(gateway.stats().requests.by_route[SUBMIT]).toBe(submissions);
    await engine.close();
  });

  it('does not retry a task the gateway failed for its parameters: it would fail the same way again', async () => {
    const clock = new ManualClock();
    gateway = await startLocalGateway({ clock, latencyScale: 0, seed: 1 });
    // A video's URL in an image field: the gateway takes the submission and fails the task.
    const recipe = `version: 1
name: video-as-image
steps:
  clip:
    uses: upload
    with: { path: ./assets/ride.mp4 }
  framed:
    uses: vendor-b/vendor-b-5.0-lite-edit
    retry: { attempts: 2, backoff: 10ms }
    with: { prompt: frame it, image: ["\${{ steps.clip.outputs.url }}"], size: 1024x1024 }
`;
    const engine = await engineFor(recipe, gateway, clock);
    const result = await runPlanSkippingTime(engine, gateway, clock);
    const failure = result.rows[0]!.steps.framed!.failure;
    expect(failure?.reason).toBe('invalid-parameters');
    expect(failure?.message).toContain('Invalid parameters: image[0] is not a');
    expect(gateway.stats().requests.by_route[SUBMIT]).toBe(1);
    await engine.close();
  });

  it('never calls a text model again after its answer was cut off: billed by the token, its outcome is unknown', async () => {
    const clock = new ManualClock();
    gateway = await startLocalGateway({ clock, latencyScale: 0, seed: 1 });
    const routes = ['POST /llm/v1/chat/completions', 'POST /llm/v1/responses', 'POST /llm/v1/messages'];
    for (const route of routes) gateway.injectFault({ kind: 'drop-after', route });
    const recipe = `version: 1
name: one-text
steps:
  brief:
    uses: llm
    retry: { attempts: 3, backoff: 10ms }
    with: { model: vendor-x/writer-1, prompt: a brief }
`;
    const engine = await engineFor(recipe, gateway, clock);
    const result = await runPlanSkippingTime(engine, gateway, clock);
    const failure = result.rows[0]!.steps.brief!.failure;
    expect(failure).toMatchObject({ reason: 'outcome-unknown', outcomeUnknown: true });
    expect(failure?.message).toMatch(/may or may not have been answered, and billed/);
    const calls = routes.map((route) => gateway!.stats().requests.by_route[route] ?? 0);
    expect(calls.reduce((a, b) => a + b, 0)).toBe(1);
    await engine.close();
  });

  /** Runs `exit ${{ item }}` over `codes` with one retry each: the result, and the console's retry lines. */
  async function retriedCommands(codes: number[]) {
    const clock = new ManualClock();
    gateway = await startLocalGateway({ clock, latencyScale: 0, seed: 1 });
    const recipe = `version: 1
name: odd-ones
steps:
  check:
    for_each: ${JSON.stringify(codes)}
    retry: { attempts: 1, backoff: 10ms }
    run: exit \${{ item }}
`;
    let text = '';
    const report = new ConsoleReporter(
      (written) => (text += written),
      () => 0,
    );
    const engine = await engineFor(recipe, gateway, clock, { report });
    const result = await runPlanSkippingTime(engine, gateway, clock);
    await engine.close();
    return { result, retries: text.split('\n').filter((line) => line.startsWith('↻')) };
  }

  it('retries each failed item on its own, and names it', async () => {
    const { result, retries } = await retriedCommands([0, 1, 0, 1]);
    expect(result.rows[0]!.steps.check!.status).toBe('failed');
    // In the order the commands ended.
    expect(retries.sort()).toEqual([
      expect.stringMatching(/^↻ check\[1\]: the command exited with 1; retrying in 10ms \(1 of 1\)$/),
      expect.stringMatching(/^↻ check\[3\]: the command exited with 1; retrying in 10ms \(1 of 1\)$/),
    ]);
  });

  it('names the first ten retries of a step, then says in one line that more are retried', async () => {
    const { retries } = await retriedCommands(Array.from({ length: 14 }, () => 1));
    expect(retries).toHaveLength(11);
    expect(retries.slice(0, 10).every((line) => /^↻ check\[\d+\]: the command exited with 1; /.test(line))).toBe(true);
    expect(retries[10]).toBe(
      '↻ check: more of its items failed and are retried too, unnamed here (runs show lists what failed for good)',
    );
  });

  it('does not retry a certain refusal (400), even when the recipe allows retries', async () => {
    const clock = new ManualClock();
    gateway = await startLocalGateway({ clock, latencyScale: 0, seed: 1 });
    gateway.injectFault({ kind: 'status', status: 400, route: SUBMIT });
    const engine = await engineFor(IMAGE.replace('attempts: 0', 'attempts: 1, backoff: 10ms'), gateway, clock);
    const result = await runPlanSkippingTime(engine, gateway, clock);
    // A 400 is a certain refusal: nothing paid is in doubt, but sending it again would fail again.
    expect(result.rows[0]!.steps.image!.status).toBe('failed');
    expect(gateway.stats().requests.by_route[SUBMIT]).toBe(1);
    await engine.close();
  });
});

describe('a for_each that gives no list at run time', () => {
  it('fails naming the expression as written: a misspelt field of an open schema passes validate', async () => {
    const clock = new ManualClock();
    gateway = await startLocalGateway({ clock, latencyScale: 0, seed: 3 });
    const recipe = `version: 1
name: open-schema
steps:
  brief:
    uses: llm
    with:
      model: vendor-x/writer-1
      prompt: Write prompts
      schema: { type: object, properties: { prompts: { type: array, items: { type: string } } } }
  art:
    uses: vendor-a/vendor-a-v3-t2i
    for_each: \${{ steps.brief.outputs.json.promts }}
    with: { prompt: "\${{ item }}" }
`;
    const engine = await engineFor(recipe, gateway, clock);
    const result = await runPlanSkippingTime(engine, gateway, clock);
    expect(result.rows[0]!.steps.art!.failure?.message).toBe(
      'for_each ${{ steps.brief.outputs.json.promts }} gave null, not a list',
    );
    expect(gateway.stats().tasks.submitted).toEqual({});
    await engine.close();
  });
});
