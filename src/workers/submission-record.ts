/**
 * The record of one model job's submission in Redis (`submissionKey`): what makes a paid POST
 * happen at most once, however many workers take the job over and whatever the coordinator does.
 * Each change is one Lua script, so two processes never both believe they may send:
 *
 *   queued ─claim→ claimed ─send→ submitting ─answer→ submitted (task_id) | refused | unknown
 *      └──────────┴─retire→ withdrawn
 *
 * The coordinator writes `queued` before it queues the job (`openRecord`), so a record that is not
 * there at all means Redis lost it (a restart without its data): then nobody can tell whether the
 * POST left, and the submission is `unknown`, never sent again.
 *
 * `claimed` (by an owner, before the budget's wait) sends nothing; a worker taking the job over
 * claims it again, and the first owner can then no longer send. `submitting` is written just
 * before the POST leaves, and only by the current owner. `retire` (the coordinator withdrawing a
 * job, or recalling it on resume) ends a record nothing was sent for, so no owner can send later.
 */
import type { Redis } from 'ioredis';
import { RECORD_TTL_S } from './jobs.js';

/** A record as it stands, or `mine` when the caller now owns a claimed, unsent submission. */
export type RecordState =
  | { state: 'mine' }
  | { state: 'submitting' }
  | { state: 'submitted'; taskId: string }
  | { state: 'refused'; reason: string; message: string }
  | { state: 'unknown'; message: string }
  | { state: 'withdrawn' };

const OPEN = `
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('HSET', KEYS[1], 'state', 'queued')
  redis.call('EXPIRE', KEYS[1], ARGV[1])
end
return 1`;

const CLAIM = `
local state = redis.call('HGET', KEYS[1], 'state')
if state == 'queued' or state == 'claimed' then
  redis.call('HSET', KEYS[1], 'state', 'claimed', 'owner', ARGV[1])
  redis.call('EXPIRE', KEYS[1], ARGV[2])
  return 'mine'
end
if not state then return 'lost' end
return state`;

const SEND = `
local state = redis.call('HGET', KEYS[1], 'state')
if redis.call('HGET', KEYS[1], 'owner') == ARGV[1] and (state == 'claimed' or state == 'submitting') then
  redis.call('HSET', KEYS[1], 'state', 'submitting')
  return 1
end
return 0`;

const RETIRE = `
local state = redis.call('HGET', KEYS[1], 'state')
if not state then return 'lost' end
if state == 'queued' or state == 'claimed' then
  redis.call('HSET', KEYS[1], 'state', 'withdrawn')
  redis.call('EXPIRE', KEYS[1], ARGV[1])
  return 'withdrawn'
end
return state`;

async function read(redis: Redis, key: string, state: string): Promise<RecordState> {
  const found = (await redis.hgetall(key)) as Record<string, string | undefined>;
  switch (state) {
    case 'mine':
    case 'submitting':
    case 'withdrawn':
      return { state };
    case 'submitted':
      return found.task_id ? { state: 'submitted', taskId: found.task_id } : { state: 'submitting' };
    case 'refused':
      return { state: 'refused', reason: found.reason ?? 'refused', message: found.message ?? '' };
    case 'lost':
      return {
        state: 'unknown',
        message:
          'its submission record is gone from Redis (restarted without its data?), so whether it was sent is not known',
      };
    default:
      return { state: 'unknown', message: found.message ?? 'the answer was lost' };
  }
}

/** Before the job is queued: the record of a submission not yet sent (kept as it is when it exists, on a resume). */
export async function openRecord(redis: Redis, key: string): Promise<void> {
  await redis.eval(OPEN, 1, key, RECORD_TTL_S);
}

/** Takes the submission (unsent, or claimed by a worker since lost), or answers how far it got. */
export async function claim(redis: Redis, key: string, owner: string): Promise<RecordState> {
  return read(redis, key, String(await redis.eval(CLAIM, 1, key, owner, RECORD_TTL_S)));
}

/** Just before the POST leaves: true when this owner may send (no one took the job over since). */
export async function markSending(redis: Redis, key: string, owner: string): Promise<boolean> {
  return Number(await redis.eval(SEND, 1, key, owner)) === 1;
}

/** The gateway's answer, written by the owner that sent. */
export async function recordAnswer(
  redis: Redis,
  key: string,
  answer:
    | { state: 'submitted'; task_id: string }
    | { state: 'refused'; reason: string; message: string }
    | { state: 'unknown'; message: string },
): Promise<void> {
  // With its time to live again: a record Redis lost is written anew by the answer.
  await redis.multi().hset(key, answer).expire(key, RECORD_TTL_S).exec();
}

/** Ends a record nothing was sent for (none, or only claimed); answers the record as it then stands. */
export async function retire(redis: Redis, key: string): Promise<RecordState> {
  return read(redis, key, String(await redis.eval(RETIRE, 1, key, RECORD_TTL_S)));
}
