import { afterEach, describe, expect, it } from 'vitest';
import { openWebhookInbox } from '../../src/engine/webhook-inbox.js';
import { startLocalGateway, type LocalGateway } from '../../src/local-gateway/index.js';
import { engineFor } from '../support/engine.js';
import { ManualClock } from '../support/manual-clock.js';
import { runPlanSkippingTime } from '../support/run-engine.js';

let gateway: LocalGateway | undefined;
afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
});

describe('step semantics', () => {
  it('skips a step whose if is false, and every step that needs it; needs orders steps', async () => {
    const clock = new ManualClock();
    gateway = await startLocalGateway({ clock, latencyScale: 0 });
    const recipe = `version: 1
name: conditions
inputs:
  fancy: { type: boolean, default: false }
steps:
  first: { run: "echo one" }
  second: { run: "echo two", needs: first }
  fancy: { run: "echo fancy", if: "\${{ inputs.fancy }}" }
  after-fancy: { run: "echo \${{ steps.fancy.outputs.stdout }}" }
outputs:
  second: \${{ steps.second.outputs.stdout }}
`;
    const engine = await engineFor(recipe, gateway, clock);
    const result = await runPlanSkippingTime(engine, gateway, clock);
    expect(result.status).toBe('succeeded');
    const steps = result.rows[0]!.steps;
    expect(steps.fancy).toMatchObject({ status: 'skipped', reason: 'its condition is false' });
    expect(steps['after-fancy']).toMatchObject({ status: 'skipped', reason: 'it needs fancy, which was skipped' });
    expect(result.rows[0]!.outputs).toEqual({ second: 'two' });
    const started = engine
      .events()
      .filter((e) => e.type === 'step-started')
      .map((e) => (e as { step: string }).step);
    expect(started.indexOf('first')).toBeLessThan(started.indexOf('second'));
    await engine.close();
  });

  it('keeps going past a failure with continue_on_error, and dependants see null outputs', async () => {
    const clock = new ManualClock();
    gateway = await startLocalGateway({ clock, latencyScale: 0 });
    const recipe = `version: 1
name: tolerant
steps:
  flaky: { run: "echo broken >&2; exit 3", continue_on_error: true, retry: { attempts: 0 } }
  report: { run: ["node", "-e", "console.log(JSON.stringify({ got: process.argv[1] }))", "\${{ default(steps.flaky.outputs.stdout, 'nothing') }}"] }
`;
    const engine = await engineFor(recipe, gateway, clock);
    const result = await runPlanSkippingTime(engine, gateway, clock);
    const steps = result.rows[0]!.steps;
    expect(steps.flaky!.failure).toMatchObject({
      reason: 'command-failed',
      message: 'the command exited with 3:\nbroken',
    });
    expect(steps.report).toMatchObject({ status: 'succeeded', outputs: { json: { got: 'nothing' }, exit_code: 0 } });
    // As in GitHub Actions, a failure with continue_on_error concludes as a success: the run succeeds.
    expect(result.status).toBe('succeeded');
    const failedEvent = engine.events().find((e) => e.type === 'step-failed');
    expect(failedEvent).toMatchObject({ step: 'flaky', continued: true });
    await engine.close();
  });

  it('names a program of the list form that is not installed, as a shell would', async () => {
    const clock = new ManualClock();
    gateway = await startLocalGateway({ clock, latencyScale: 0 });
    const recipe = `version: 1
name: missing
steps:
  frames: { run: ["no-such-program-here", "-y"], retry: { attempts: 0 } }
`;
    const engine = await engineFor(recipe, gateway, clock);
    const result = await runPlanSkippingTime(engine, gateway, clock);
    expect(result.rows[0]!.steps.frames!.failure).toMatchObject({
      reason: 'command-failed',
      message: 'no-such-program-here: not found (ENOENT): is it installed, and on the PATH?',
    });
    await engine.close();
  });

  it('stops at a failure without continue_on_error: later steps are cancelled', async () => {
    const clock = new ManualClock();
    gateway = await startLocalGateway({ clock, latencyScale: 0 });
    const recipe = `version: 1
name: strict
steps:
  broken: { run: "exit 1", retry: { attempts: 0 } }
  later: { run: "echo never", needs: broken }
`;
    const engine = await engineFor(recipe, gateway, clock);
    const result = await runPlanSkippingTime(engine, gateway, clock);
    expect(result.rows[0]!.steps.later).toMatchObject({ status: 'cancelled', reason: 'it needs broken, which failed' });
    await engine.close();
  });

  it.each(['chat', 'responses', 'messages'])(
    'asks for JSON with a schema over the %s protocol and validates it',
    async (protocol) => {
      const clock = new ManualClock();
      gateway = await startLocalGateway({ clock, latencyScale: 0 });
      const recipe = `version: 1
name: llm
steps:
  brief:
    uses: llm
    with:
      model: vendor-x/writer-1
      protocol: ${protocol}
      system: You are an art director.
      prompt: Write 4 image prompts about lighthouses.
      schema: { type: object, required: [prompts], properties: { prompts: { type: array, items: { type: string } } } }
  count: { run: "echo \${{ length(steps.brief.outputs.json.prompts) }}" }
`;
      const engine = await engineFor(recipe, gateway, clock);
      const result = await runPlanSkippingTime(engine, gateway, clock);
      expect(result.status).toBe('succeeded');
      expect(result.rows[0]!.steps.count!.outputs).toMatchObject({ stdout: '4' });
      expect(result.rows[0]!.steps.brief!.outputs).toMatchObject({
        usage: { input_tokens: expect.any(Number), output_tokens: expect.any(Number) },
      });
      await engine.close();
    },
  );

  it('fetches more than 20 URLs as several requests, and uploads a file once per content', async () => {
    const clock = new ManualClock();
    gateway = await startLocalGateway({ clock, latencyScale: 0, rpm: 1000 });
    const urls = Array.from(
      { length: 25 },
      (_, i) => `${gateway!.schemaUrl}/web/${i % 2 ? 'nope' : 'bikes.example'}/solar-cargo-bikes.html`,
    );
    const recipe = `version: 1
name: many
inputs:
  urls: { type: array }
steps:
  read: { uses: web-fetch, with: { urls: "\${{ inputs.urls }}" } }
  one: { uses: upload, with: { path: ./assets/logo.png } }
  two: { uses: upload, with: { path: ./assets/logo.png } }
`;
    const engine = await engineFor(recipe, gateway, clock, { sets: [`urls=${JSON.stringify(urls)}`] });
    const result = await runPlanSkippingTime(engine, gateway, clock);
    const read = result.rows[0]!.steps.read!.outputs as { pages: unknown[]; failed: unknown[] };
    expect([read.pages.length, read.failed.length]).toEqual([13, 12]);
    expect(gateway.stats().requests.by_route['POST /tools/v1/web-fetch']).toBe(2);
    expect(gateway.stats().requests.by_route['POST /api/v1/media/files']).toBe(1);
    expect((result.rows[0]!.steps.one!.outputs as { url: string }).url).toBe(
      (result.rows[0]!.steps.two!.outputs as { url: string }).url,
    );
    await engine.close();
  });
});

describe('webhook mode', () => {
  it('takes results by webhook for this run only, with few polls', async () => {
    const clock = new ManualClock();
    gateway = await startLocalGateway({ clock, latencyScale: 0.05, latencyJitter: 0 });
    const inbox = await openWebhookInbox('127.0.0.1:0');
    const recipe = `version: 1
name: hooked
steps:
  image:
    uses: vendor-a/vendor-a-v3-t2i
    for_each: ["a", "b", "c", "d", "e", "f"]
    with: { prompt: "\${{ item }}" }
`;
    const engine = await engineFor(recipe, gateway, clock);
    engine.ctx.webhook = inbox;
    // A stranger on the path without the token, or with a task of no run, is turned away.
    expect((await fetch(`http://127.0.0.1:${inbox.port}/guess`, { method: 'POST', body: '{}' })).status).toBe(404);
    const forged = await fetch(inbox.url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ code: 0, data: { task_id: 'task_000000000000000000000000', status: 'success' } }),
    });
    expect(forged.status).toBe(404);
    // The gateway's deliveries are HTTP requests of this process: the clock waits for them too.
    const result = await runPlanSkippingTime(engine, gateway, clock);
    expect(result.status).toBe('succeeded');
    const stats = gateway.stats();
    expect(stats.webhooks.delivered).toBe(6);
    expect(inbox.received()).toBe(6);
    // Six submissions; the safety polls wait three times the expected time, so few or none are needed.
    expect(stats.requests.by_route['GET /api/v1/tasks/{task_id}'] ?? 0).toBeLessThanOrEqual(2);
    await inbox.close();
    await engine.close();
  });
});
