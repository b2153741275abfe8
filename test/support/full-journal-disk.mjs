// Preloaded (`node --import`) into a `pipeline` process by a test: the disk under the run's journal
// fills up after FULL_AFTER_WRITES writes to it, as a real full disk would (ENOSPC). Other files
// (outputs, logs) are written as usual.
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';

const write = fs.writeSync;
const limit = Number(process.env.FULL_AFTER_WRITES ?? 10);
let journalWrites = 0;
fs.writeSync = function writeSync(fd, ...rest) {
  let target = '';
  try {
    target = fs.readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    // Not a file descriptor with a path: written as usual.
  }
  if (target.endsWith('journal.jsonl') && ++journalWrites > limit) {
    throw Object.assign(new Error('ENOSPC: no space left on device, write'), {
      code: 'ENOSPC',
      errno: -28,
      syscall: 'write',
    });
  }
  return write.call(this, fd, ...rest);
};
// The modules that import writeSync by name see this one.
syncBuiltinESMExports();
