import { existsSync, statSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { execa } from 'execa';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, CHROMIUM_ARGS, chromiumMissing } from '../support/chromium.js';

const cli = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

interface RunJson {
  status: string;
  steps: Array<{ step: string; tasks: unknown[] }>;
  files: Array<{ path: string }>;
}

describe.skipIf(chromiumMissing)('the report of a launch-kit run, in headless Chromium', () => {
  let home: string;
  let runDir: string;
  let browser: Browser;

  beforeAll(async () => {
    home = await mkdtemp(join(tmpdir(), 'pipeline-report-'));
    const env = { PIPELINE_HOME: home, PIPELINE_LOCAL_LATENCY_SCALE: '0.02', CI: 'true' };
    const run = await execa('node', [cli, 'run', 'recipes/launch-kit.yaml', '--local', '--json'], {
      reject: false,
      env,
    });
    expect(run.exitCode, run.stderr).toBe(0);
    runDir = JSON.parse(run.stdout).run_dir;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await rm(home, { recursive: true, force: true });
  });

  it('shows every image decoded, a video that exists, the counts of run.json; no error, nothing fetched', async () => {
    const summary = JSON.parse(await readFile(join(runDir, 'run.json'), 'utf8')) as RunJson;
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const problems: string[] = [];
    page.on('console', (message) => message.type() === 'error' && problems.push(`console: ${message.text()}`));
    page.on('pageerror', (error) => problems.push(`page: ${error.message}`));
    page.on('request', (request) => {
      if (!/^(file|data):/.test(request.url())) problems.push(`request: ${request.url()}`);
    });
    await page.goto(pathToFileURL(join(runDir, 'report.html')).href, { waitUntil: 'load' });

    const images = await page.$$eval('.card img', (all) =>
      all.map((img) => ({ complete: img.complete, width: img.naturalWidth })),
    );
    const imageFiles = summary.files.filter((f) => f.path.endsWith('.png'));
    expect(images).toHaveLength(imageFiles.length);
    for (const image of images) expect(image).toMatchObject({ complete: true, width: expect.any(Number) });
    expect(images.every((image) => image.width > 0)).toBe(true);

    const videos = await page.$$eval('.card video', (all) =>
      all.map((v) => ({ src: v.src, noSource: v.networkState === 3 })),
    );
    expect(videos).toHaveLength(1);
    expect(videos[0]!.noSource).toBe(false);
    expect(existsSync(fileURLToPath(videos[0]!.src))).toBe(true);

    const total = (name: string) => page.$eval(`[data-total="${name}"]`, (cell) => cell.textContent);
    expect(await total('tasks')).toBe(String(summary.steps.reduce((n, s) => n + s.tasks.length, 0)));
    expect(await total('files')).toBe(String(summary.files.length));
    expect(await page.textContent('#run-status')).toBe(summary.status);
    expect(await page.$$eval('section.step', (all) => all.map((s) => s.getAttribute('data-step')))).toEqual(
      summary.steps.map((s) => s.step),
    );
    expect(await page.$$eval('svg.dag .dag-node', (all) => all.map((n) => n.getAttribute('data-status')))).toEqual(
      summary.steps.map(() => 'succeeded'),
    );
    expect(await page.$$eval('svg.timeline .timeline-step', (all) => all.length)).toBe(summary.steps.length);

    // A click on a thumbnail shows the full image, read from outputs/.
    await page.click('.card a.full');
    const fullWidth = () =>
      page.$eval('#lightbox.open img', (big) => (big.complete ? big.naturalWidth : 0)).catch(() => 0);
    await expect.poll(fullWidth).toBe(2048);
    await page.keyboard.press('Escape');

    // The filters: one prompt found by text, none failed.
    const firstPrompt = await page.$eval('section[data-step="hero"] .prompt', (p) => p.textContent ?? '');
    await page.fill('#f-text', firstPrompt.slice(0, 30));
    expect(await page.textContent('#f-shown')).toBe(`1 of ${await page.$$eval('.card', (all) => all.length)} items`);
    await page.fill('#f-text', '');
    await page.selectOption('#f-status', 'failed');
    expect(await page.textContent('#f-shown')).toMatch(/^0 of \d+ items$/);
    await page.selectOption('#f-status', '');

    const shot = join(home, 'report.png');
    await page.screenshot({ path: shot, fullPage: true });
    expect(statSync(shot).size).toBeGreaterThan(10_000);
    expect(problems).toEqual([]);
  }, 60_000);
});
