import { describe, expect, it } from 'vitest';
import { resumeCommand } from '../../src/cli/resume-hint.js';

// What `pipeline run` prints after a stop, for pasting: the command line's own flags, never a secret.
const hint = (flags: Parameters<typeof resumeCommand>[1]) =>
  resumeCommand('r1', flags).replace(/^\S+(?: \S+)* resume /, 'resume ');

describe('the printed resume command', () => {
  it('keeps the pace and the slots given on the command line', () => {
    expect(hint({ rpm: 20, concurrency: 4, queueAhead: 2 })).toBe('resume r1 --rpm 20 --concurrency 4 --queue-ahead 2');
    expect(hint({ rpm: 'auto' })).toBe('resume r1 --rpm auto');
  });

  it('gives a Redis URL without a password as it was, and one with a password with REDIS_PASSWORD in its place', () => {
    expect(hint({ redis: 'redis://127.0.0.1:6379' })).toBe('resume r1 --redis redis://127.0.0.1:6379');
    // Naming "$PIPELINE_REDIS_URL" instead pasted as --redis "" where that variable was unset.
    const masked = hint({ redis: 'redis://:s3cret@10.0.0.5:6379/2' });
    expect(masked).toBe(
      'resume r1 --redis redis://:REDIS_PASSWORD@10.0.0.5:6379/2  # put the Redis password in place of REDIS_PASSWORD',
    );
    expect(masked).not.toContain('s3cret');
    expect(hint({ redis: 'redis://10.0.0.5/?password=s3cret' })).toBe(
      "resume r1 --redis 'redis://10.0.0.5/?password=REDIS_PASSWORD'  # put the Redis password in place of REDIS_PASSWORD",
    );
  });
});
