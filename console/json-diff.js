// What changed inside a JSON value, member by member: each change named by its JSON
// Pointer (RFC 6901) with the value before and after, as `discfg diff` prints it
// (`/db/host: "db1" → "db2"`), for history and for comparing two revisions of a config.

import { isJsonType, parseJson, sameJson, writeJson } from './json.js?v={{version}}';

/** A member name as a JSON Pointer segment: "~" as "~0", "/" as "~1". */
export const pointerSegment = (name) => String(name).replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * The changes that turn `before` into `after` (parsed by json.js), in document order:
 * { pointer, type: 'add' | 'remove' | 'change', before, after }. Objects are compared
 * member by member and arrays item by item; anything else changes whole. Equal values
 * give no change.
 */
export function jsonChanges(before, after, pointer = '', out = []) {
  if (before instanceof Map && after instanceof Map) {
    for (const [name, value] of before) {
      const at = `${pointer}/${pointerSegment(name)}`;
      if (after.has(name)) jsonChanges(value, after.get(name), at, out);
      else out.push({ pointer: at, type: 'remove', before: value });
    }
    for (const [name, value] of after) {
      if (!before.has(name)) out.push({ pointer: `${pointer}/${pointerSegment(name)}`, type: 'add', after: value });
    }
    return out;
  }
  if (Array.isArray(before) && Array.isArray(after)) {
    const common = Math.min(before.length, after.length);
    for (let index = 0; index < common; index += 1) jsonChanges(before[index], after[index], `${pointer}/${index}`, out);
    for (let index = common; index < before.length; index += 1) out.push({ pointer: `${pointer}/${index}`, type: 'remove', before: before[index] });
    for (let index = common; index < after.length; index += 1) out.push({ pointer: `${pointer}/${index}`, type: 'add', after: after[index] });
    return out;
  }
  if (!sameJson(before, after)) out.push({ pointer, type: 'change', before, after });
  return out;
}

/** One change as a line: `/db/host: "a" → "b"`, `/db/user: added "x"`, `/old: removed (was 1)`. */
export function describeJsonChange(change) {
  const where = change.pointer || '(the whole value)';
  if (change.type === 'add') return `${where}: added ${writeJson(change.after)}`;
  if (change.type === 'remove') return `${where}: removed (was ${writeJson(change.before)})`;
  return `${where}: ${writeJson(change.before)} → ${writeJson(change.after)}`;
}

/**
 * An item's value parsed, when it is JSON (by its content type) and parses; undefined
 * otherwise (text, binary, a secret, a deleted key), so the caller compares it by lines.
 */
export function jsonValueOf(item) {
  if (!item || item.encoding === 'base64' || !isJsonType(item.contentType || '')) return undefined;
  try {
    return parseJson(item.value);
  } catch {
    return undefined;
  }
}
