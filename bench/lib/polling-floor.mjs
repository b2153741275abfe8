// The polling floor: the least makespan that any client learning of a task's end only by reading
// the task could reach, on a gateway whose processing times are uniform within ±J of each model's
// mean (the local gateway's --latency-jitter J).
//
// A polled task holds its place from its end until a read sees it. A task's time lies in a window
// of width w = 2·J·mean; reads inside it trade requests for that wait. The best reads for one task,
// whatever the client, are a few points in the window ending at its top (no read before the window
// can succeed, and the last must be at its top or the task may never be seen): with reads at
// fractions s₁ < … < s_k = 1 of it, the expected wait is w·Σ(sᵢ − sᵢ₋₁)²/2 and the expected reads
// Σ(1 − sᵢ₋₁), since a task is read no more once a read has seen it end. The client chooses how
// much to read each task; the requests per second and the places cap both:
//
//   makespan ≥ (Σ task time + Σ wait) ÷ places     and     makespan ≥ (submissions + reads + uploads) ÷ rate
//
// The floor is the least makespan meeting both, over every way of spending reads (a task may read
// more than another: a long video's wait costs more than an image's). The DAG-aware bound is the
// same with no wait and one read per task, what a client told of each end at once could reach.

/** Read positions on a grid of this many steps of the window. */
const GRID = 400;

/**
 * The best trade-off of expected reads against expected wait for one task (wait in widths of its
 * window), as points from the most reads to the fewest: for each price of a read, the reads that
 * minimise wait + price × reads, found by dynamic programming over the last read's position.
 */
function readTradeOff() {
  const points = [];
  for (let e = -5; e <= 0.5; e += 0.05) {
    const price = 10 ** e;
    const cost = new Float64Array(GRID + 1).fill(Number.POSITIVE_INFINITY);
    const previous = new Int32Array(GRID + 1);
    cost[0] = 0; // the window's start: no read is needed there
    for (let j = 1; j <= GRID; j++)
      for (let i = 0; i < j; i++) {
        const d = (j - i) / GRID;
        const c = cost[i] + (d * d) / 2 + price * (1 - i / GRID);
        if (c < cost[j]) {
          cost[j] = c;
          previous[j] = i;
        }
      }
    let wait = 0;
    let reads = 0;
    for (let j = GRID; j > 0; j = previous[j]) {
      const i = previous[j];
      wait += ((j - i) / GRID) ** 2 / 2;
      reads += 1 - i / GRID;
    }
    points.push({ wait, reads });
  }
  return points;
}

let tradeOff;

/**
 * The polling floor of a run, in ms: `tasks` as `{ ms, meanMs }` (each task's processing time and
 * its model's mean), `jitter` the gateway's J, `places` its tasks at once, `ratePerS` its requests
 * per second, `otherRequests` those that are not a submission or a read (uploads).
 */
export function pollingFloorMs({ tasks, jitter, places, ratePerS, otherRequests = 0 }) {
  tradeOff ??= readTradeOff();
  const work = tasks.reduce((sum, task) => sum + task.ms, 0);
  // For each price of a read (in ms of waiting), each task takes the reads that cost it least.
  const sides = [];
  for (let e = -3; e <= 5; e += 0.02) {
    const price = 10 ** e;
    let wait = 0;
    let reads = 0;
    for (const task of tasks) {
      const width = 2 * jitter * task.meanMs;
      let best = tradeOff[0];
      for (const point of tradeOff)
        if (width * point.wait + price * point.reads < width * best.wait + price * best.reads) best = point;
      wait += width * best.wait;
      reads += best.reads;
    }
    sides.push({ places: (work + wait) / places, rate: ((tasks.length + reads + otherRequests) / ratePerS) * 1000 });
  }
  // Cheaper reads mean more of them: the places side falls as the rate side rises. Between two
  // neighbouring prices a client can mix both choices, task by task: the sides move in a line.
  let floor = Math.min(...sides.map((side) => Math.max(side.places, side.rate)));
  for (let i = 1; i < sides.length; i++) {
    const [a, b] = [sides[i - 1], sides[i]];
    const [da, db] = [a.places - a.rate, b.places - b.rate];
    if (da * db >= 0) continue;
    const t = da / (da - db);
    floor = Math.min(floor, a.places + t * (b.places - a.places));
  }
  return floor;
}
