// Feature flags as the console reads them: the flag sets of a config (JSON documents in
// flagd's format at keys under /flags/) read into the flags they define, and the kill
// switch's edit of one flag's state in its set's text, every other character kept as
// written (the edit the CLI's FlagStateEdit makes).

import { parseJson, prettyJson, writeJson } from './json.js?v={{version}}';
import { isBinary, isSecret } from './format.js?v={{version}}';

/** Where a config keeps its flag sets. */
export const FLAGS_PREFIX = '/flags/';

export const isFlagSetKey = (key) => typeof key === 'string' && key.startsWith(FLAGS_PREFIX) && key.length > FLAGS_PREFIX.length;

/** A parsed JSON value as text: compact, numbers and strings as written. */
const shown = (value) => writeJson(value);

/** A parsed object's members as [name, text] pairs, in the order written. */
const memberTexts = (object) => (object instanceof Map ? Array.from(object, ([name, value]) => [name, shown(value)]) : []);

/**
 * The flag sets among a config's items (key → item), in key order:
 * { key, revision, flags, metadata, problem }. `flags` are the set's flags in the order
 * written, each { key, state, defaultVariant (null for none), variants: [[name, text]],
 * targeting (indented text, null for none), metadata: [[name, text]] }; `metadata` the
 * set's own. A set that cannot be read has no flags and `problem`, one sentence why.
 */
export function flagSets(items) {
  const keys = [...items.keys()].filter(isFlagSetKey).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return keys.map((key) => {
    const item = items.get(key);
    return { key, revision: item.modRevision, ...readFlagSet(item) };
  });
}

/** One flag set's item read: { flags, metadata, problem } (problem null when it reads). */
export function readFlagSet(item) {
  const refused = (problem) => ({ flags: [], metadata: [], problem });
  if (isSecret(item)) return refused('it is a sealed secret, so its flags cannot be shown here.');
  if (isBinary(item)) return refused('it is a binary value, not a JSON flag set.');
  let document;
  try {
    document = parseJson(typeof item.value === 'string' ? item.value : '');
  } catch (error) {
    return refused(`it is not JSON (${error.message}).`);
  }
  if (!(document instanceof Map)) return refused('it is not a JSON object.');
  const flags = document.get('flags');
  if (!(flags instanceof Map)) return refused('it has no "flags" object.');
  const read = [];
  for (const [key, flag] of flags) {
    const problem = flagProblem(flag);
    if (problem) return refused(`flag "${key}" ${problem}`);
    const targeting = flag.get('targeting');
    const defaultVariant = flag.get('defaultVariant');
    const empty = targeting === undefined || targeting === null || (targeting instanceof Map && targeting.size === 0);
    read.push({
      key,
      state: flag.get('state'),
      defaultVariant: typeof defaultVariant === 'string' ? defaultVariant : null,
      variants: memberTexts(flag.get('variants')),
      targeting: empty ? null : prettyJson(shown(targeting)),
      metadata: memberTexts(flag.get('metadata')),
    });
  }
  return { flags: read, metadata: memberTexts(document.get('metadata')), problem: null };
}

/** Why a parsed flag cannot be shown, or null. */
function flagProblem(flag) {
  if (!(flag instanceof Map)) return 'is not a JSON object.';
  const state = flag.get('state');
  if (state !== 'ENABLED' && state !== 'DISABLED') return 'has no state ENABLED or DISABLED.';
  if (!(flag.get('variants') instanceof Map)) return 'has no "variants" object.';
  return null;
}

/** The state the kill switch gives a flag now in `state`. */
export const otherState = (state) => (state === 'ENABLED' ? 'DISABLED' : 'ENABLED');

// ---------------------------------------------------------------------------
// The kill switch's edit
// ---------------------------------------------------------------------------

/**
 * `text` (a flag set's JSON) with the `state` of flag `key` set to `state`, every other
 * character as it was: spacing, member order, numbers. Throws an Error saying why when
 * the text has no such flag or state.
 */
export function settingFlagState(text, key, state) {
  const scanner = new Scanner(text);
  const flags = scanner.member('flags', scanner.valueStart(0));
  const flag = flags === null ? null : scanner.member(key, flags);
  const at = flag === null ? null : scanner.member('state', flag);
  if (at === null) throw new Error(`the flag set has no state for flag “${key}” at /flags/${key}/state`);
  return text.slice(0, at) + JSON.stringify(state) + text.slice(scanner.end(at));
}

/** Finds members in JSON text that parses; any surprise is an error. */
class Scanner {
  constructor(text) {
    this.text = text;
  }

  malformed() {
    return new Error('the flag set is not JSON');
  }

  skipSpace(i) {
    let j = i;
    while (j < this.text.length && ' \t\n\r'.includes(this.text[j])) j += 1;
    return j;
  }

  /** Where the value starting at or after `i` begins. */
  valueStart(i) {
    const j = this.skipSpace(i);
    if (j >= this.text.length) throw this.malformed();
    return j;
  }

  /** Where the value beginning at `i` ends (one past its last character). */
  end(i) {
    const { text } = this;
    if (i >= text.length) throw this.malformed();
    const c = text[i];
    if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      if (j >= text.length) throw this.malformed();
      return j + 1;
    }
    if (c === '{' || c === '[') {
      let depth = 0;
      for (let j = i; j < text.length; j += 1) {
        const d = text[j];
        if (d === '"') j = this.end(j) - 1;
        else if (d === '{' || d === '[') depth += 1;
        else if (d === '}' || d === ']') {
          depth -= 1;
          if (depth === 0) return j + 1;
        }
      }
      throw this.malformed();
    }
    let j = i;
    while (j < text.length && !',}] \t\n\r'.includes(text[j])) j += 1;
    return j;
  }

  /**
   * Where the value of member `name` of the object at `i` begins; null when the value at
   * `i` is not an object or has no such member (the last, when named twice, as parsers keep it).
   */
  member(name, i) {
    const { text } = this;
    if (text[i] !== '{') return null;
    let j = this.skipSpace(i + 1);
    let found = null;
    while (j < text.length && text[j] !== '}') {
      const nameEnd = this.end(j);
      let member;
      try {
        member = JSON.parse(text.slice(j, nameEnd));
      } catch {
        throw this.malformed();
      }
      j = this.skipSpace(nameEnd);
      if (text[j] !== ':') throw this.malformed();
      const value = this.valueStart(j + 1);
      if (member === name) found = value;
      j = this.skipSpace(this.end(value));
      if (text[j] === ',') j = this.skipSpace(j + 1);
    }
    return found;
  }
}
