// report-1k: the report of a 1,000-image run (a for_each on a gateway with no limits and no processing
// time): its size, the time `pipeline report` takes to write it, and the time headless Chromium takes to open it.
import { existsSync, statSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { execa } from 'execa';
import { cli, fixed, startGateway } from '../lib/processes.mjs';

const CHROMIUM = '/usr/bin/chromium';
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

function recipe(count) {
  return `version: 1
name: report-1k
settings: { concurrency: 64 }
steps:
  numbers:
    run: ["node", "-e", "console.log(JSON.stringify(Array.from({ length: ${count} }, (_, i) => 'tile ' + i)))"]
  tile:
    uses: vendor-a/vendor-a-v3-t2i
    for_each: \${{ steps.numbers.outputs.json }}
    with: { prompt: "\${{ item }}", aspect_ratio: "1:1" }
`;
}

/** Milliseconds from navigation to the load event with every thumbnail decoded, median of three. */
async function openTimes(file) {
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
  try {
    const times = [];
    for (let i = 0; i < 3; i++) {
      const page = await browser.newPage();
      const started = performance.now();
      await page.goto(pathToFileURL(file).href, { waitUntil: 'load' });
      await page.evaluate(() => Promise.all([...document.querySelectorAll('.card img')].map((img) => img.decode())));
      times.push(performance.now() - started);
      await page.close();
    }
    return times.sort((a, b) => a - b)[1];
  } finally {
    await browser.close();
  }
}

export async function run({ quick }) {
  const items = quick ? 100 : 1_000;
  const dir = await mkdtemp(join(tmpdir(), 'bench-report-'));
  const gateway = await startGateway([
    '--rpm',
    '1000000000',
    '--max-concurrent',
    '1000000',
    '--latency-scale',
    '0',
    '--balance',
    '1000000',
  ]);
  try {
    await writeFile(join(dir, 'recipe.yaml'), recipe(items));
    const env = {
      PIPELINE_HOME: join(dir, 'home'),
      PIPELINE_BASE_URL: gateway.base_url,
      PIPELINE_API_KEY: gateway.api_key,
      CI: 'true',
    };
    const ran = await execa('node', [cli, 'run', join(dir, 'recipe.yaml'), '--json', '--no-report'], {
      reject: false,
      env,
    });
    if (ran.exitCode !== 0) throw new Error(`the run failed: ${ran.stderr.slice(-2000)}`);
    const { run_id: runId, run_dir: runDir } = JSON.parse(ran.stdout);
    const usageFile = join(dir, 'usage.json');
    const started = performance.now();
    const again = await execa('node', [cli, 'report', runId], {
      reject: false,
      env: { ...env, PIPELINE_USAGE_FILE: usageFile },
    });
    if (again.exitCode !== 0) throw new Error(`pipeline report failed: ${again.stderr}`);
    const writeMs = performance.now() - started;
    const usage = JSON.parse(await readFile(usageFile, 'utf8'));
    const file = join(runDir, 'report.html');
    const sizeMb = statSync(file).size / 1024 / 1024;
    const openMs = existsSync(CHROMIUM) ? Math.round(await openTimes(file)) : null;
    const cpuMs = Math.round(usage.user_ms + usage.system_ms);
    const figures = {
      items,
      size_mb: Number(sizeMb.toFixed(2)),
      write_ms: Math.round(writeMs),
      write_cpu_ms: cpuMs,
      open_ms: openMs,
      targets: { open_ms: 2000, size_mb: 5 },
    };
    const opened = openMs === null ? `not opened (no ${CHROMIUM})` : `opens in ${openMs} ms in Chromium`;
    return {
      line:
        `report-1k: the report of ${items} images is ${fixed(sizeMb)} MB, written in ${figures.write_ms} ms ` +
        `(${cpuMs} ms CPU, whole process), ${opened} (targets < 2000 ms, < 5 MB)`,
      figures,
    };
  } finally {
    await gateway.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
