// Splits the action's `args` input (argv[2]) into words as a POSIX shell does, without expanding
// anything, and prints them NUL-terminated for run.sh and setup.sh to read into an array.
//
// xargs, used before, is not a shell: it dropped the backslash of `a\b` and failed on `\"` inside
// double quotes, after printing half the words. Here the rules are the shell's:
// - blanks (spaces, tabs, newlines) separate words outside quotes;
// - '…' keeps everything inside as it is;
// - "…" keeps everything but a backslash before $ ` " \ or a newline, which escapes it;
// - outside quotes a backslash keeps the next character as it is (a backslash-newline joins lines);
// - $, ~, * and # are plain characters: no variable, home, glob or comment.
// An unclosed quote prints one line that says where it opened (and, in GitHub Actions, an error
// annotation), and exits 2 with no words printed.

import { appendFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

/** @returns {{ words: string[] } | { error: string }} */
export function shellWords(text) {
  const words = [];
  let word = '';
  let inWord = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === ' ' || c === '\t' || c === '\n') {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
      continue;
    }
    inWord = true;
    if (c === "'") {
      const end = text.indexOf("'", i + 1);
      if (end < 0) return { error: unclosed("'", text, i) };
      word += text.slice(i + 1, end);
      i = end;
    } else if (c === '"') {
      let j = i + 1;
      for (; j < text.length && text[j] !== '"'; j++) {
        if (text[j] === '\\' && '$`"\\\n'.includes(text[j + 1] ?? '')) {
          j++;
          if (text[j] !== '\n') word += text[j];
        } else word += text[j];
      }
      if (j >= text.length) return { error: unclosed('"', text, i) };
      i = j;
    } else if (c === '\\') {
      if (i + 1 < text.length && text[i + 1] !== '\n') word += text[i + 1];
      else if (i + 1 === text.length) word += '\\';
      // A backslash-newline between words joins the lines and makes no word of its own.
      if (text[i + 1] === '\n' && word === '') inWord = false;
      i++;
    } else word += c;
  }
  if (inWord) words.push(word);
  return { words };
}

function unclosed(quote, text, at) {
  const line = text.slice(0, at).split('\n').length;
  const column = at - text.lastIndexOf('\n', at - 1);
  const [name, other] = quote === '"' ? ['double', "'"] : ['single', '"'];
  // From the start of the word the quote is in, as far as a few words on.
  const wordStart = Math.max(text.lastIndexOf(' ', at), text.lastIndexOf('\t', at), text.lastIndexOf('\n', at)) + 1;
  const context = text.slice(wordStart, at + 16).replace(/\s+/g, ' ');
  return `the action's args, line ${line}, column ${column}: the ${name} quote in "${context}" is never closed. Words are split as a shell splits them: to pass a ${quote}, write it inside ${other}…${other} or as \\${quote}.`;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const result = shellWords(process.argv[2] ?? '');
  if ('error' in result) {
    process.stderr.write(`${result.error}\n`);
    // As the tool annotates a run it refuses: the failed job's page says why (stderr is read too).
    const escaped = result.error.replaceAll('%', '%25').replaceAll('\r', '%0D').replaceAll('\n', '%0A');
    if (process.env.GITHUB_ACTIONS === 'true') process.stderr.write(`::error title=pipeline%3A not run::${escaped}\n`);
    // run.sh asks for the step's summary too, as the tool writes one for a run it refuses
    // (setup.sh, which splits the same words first, does not: one summary, not two).
    const summary = process.env.GITHUB_STEP_SUMMARY;
    if (process.argv[3] === '--job-summary' && summary) {
      const recipe = (process.env.INPUT_RECIPE ?? '').replaceAll('|', '\\|').replaceAll('\n', ' ');
      appendFileSync(summary, `## ❌ ${recipe}: not run (exit 2)\n\n${result.error}\n\n`);
    }
    process.exit(2);
  }
  for (const word of result.words) process.stdout.write(`${word}\0`);
}
