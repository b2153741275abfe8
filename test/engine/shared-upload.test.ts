import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { runPlan } from '../../src/engine/engine.js';
import { startLocalGateway, type LocalGateway } from '../../src/local-gateway/index.js';
import { engineFor } from '../support/engine.js';

const UPLOAD = 'POST /api/v1/media/files';
/** Three items place the same logo: one content hash, so one upload. */
const recipe = (attempts: number) => `version: 1
name: three-edits
steps:
  branded:
    uses: vendor-b/vendor-b-5.0-lite-edit
    for_each: ["red", "green", "blue"]
    retry: { attempts: ${attempts}, backoff: 10ms }
    with:
      prompt: "a \${{ item }} banner with the logo in the corner"
      image: ["./assets/logo.png"]
      size: 1024x1024
`;

let gateway: LocalGateway | undefined;
afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
});

describe('one upload per content hash, also when it fails', () => {
  it('shares one failed upload among the items waiting for it instead of uploading again for each', async () => {
    gateway = await startLocalGateway({ latencyScale: 0, seed: 1 });
    // A 500 on an upload is not retried by the client: the upload fails once.
    gateway.injectFault({ kind: 'status', status: 500, route: UPLOAD });
    const engine = await engineFor(recipe(0), gateway, systemClock);
    const result = await runPlan(engine.ctx);
    const step = result.rows[0]!.steps.branded!;
    expect(gateway.stats().requests.by_route[UPLOAD]).toBe(1);
    expect(step.status).toBe('failed');
    expect(step.failure!.message).toMatch(/^upload of .*logo\.png: HTTP 500/);
    // The gateway's failure stays attached, with its status.
    expect(step.failure).toMatchObject({ reason: 'server-error', cause: { reason: 'server-error', status: 500 } });
    // Nothing was submitted: every item needed the failed upload.
    expect(gateway.stats().tasks.submitted).toEqual({});
    await engine.close();
  });

  it('tries the upload once more on a retry of the step, and the retry succeeds', async () => {
    gateway = await startLocalGateway({ latencyScale: 0, seed: 1 });
    gateway.injectFault({ kind: 'status', status: 500, route: UPLOAD });
    const engine = await engineFor(recipe(1), gateway, systemClock);
    const result = await runPlan(engine.ctx);
    expect(result.rows[0]!.steps.branded!.status).toBe('succeeded');
    expect(gateway.stats().requests.by_route[UPLOAD]).toBe(2);
    expect(gateway.stats().tasks.submitted).toEqual({ 'vendor-b/vendor-b-5.0-lite-edit': 3 });
    await engine.close();
  });
});

describe('local files in a list input', () => {
  it('uploads the files of a list input read whole, not the stand-ins the check of the recipe gives the schema', async () => {
    gateway = await startLocalGateway({ latencyScale: 0, seed: 1 });
    const pictures = `version: 1
name: list-input
inputs:
  pictures: { type: array, default: ["./assets/logo.png"] }
steps:
  each:
    uses: vendor-b/vendor-b-5.0-lite-edit
    for_each: \${{ inputs.pictures }}
    with: { prompt: "in blue", image: ["\${{ item }}"], size: 1024x1024 }
  together:
    uses: vendor-b/vendor-b-5.0-lite-edit
    with: { prompt: "side by side", image: "\${{ inputs.pictures }}", size: 1024x1024 }
`;
    const engine = await engineFor(pictures, gateway, systemClock);
    const result = await runPlan(engine.ctx);
    expect(result.rows[0]!.steps.together!.status).toBe('succeeded');
    expect(result.rows[0]!.steps.each!.status).toBe('succeeded');
    const sent = (await engine.events()).filter((event) => event.type === 'task-submitted');
    for (const event of sent) expect(JSON.stringify(event.input)).not.toContain('upload.invalid');
    expect(gateway.stats().requests.by_route[UPLOAD]).toBe(1);
    await engine.close();
  });
});
