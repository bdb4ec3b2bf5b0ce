// JSON for the console's editor: a parser that reports where a text stops being JSON
// (line and column) and keeps numbers exactly as written, and JSON merge patches
// (RFC 7386) computed from the value an edit started from and the edited one; and JSON
// text as the editor treats it (which types are JSON, re-indenting without parsing).
//
// Parsed values: objects are Maps (member order kept, any member name allowed), arrays
// are Arrays, strings are strings, numbers are JsonNumber (their text, so numbers past
// double precision survive a round trip), and true, false and null are themselves.

/** A JSON number, kept as the text it was written with. */
export class JsonNumber {
  constructor(text) {
    this.text = text;
  }
}

/** Why a text is not JSON, and where: `line` and `column` count from 1. */
export class JsonSyntaxError extends Error {
  constructor(reason, line, column) {
    super(`line ${line}, column ${column}: ${reason}`);
    this.name = 'JsonSyntaxError';
    this.reason = reason;
    this.line = line;
    this.column = column;
  }
}

// Nesting deeper than this is refused rather than risking the call stack.
const MAX_DEPTH = 1000;

const isSpace = (c) => c === ' ' || c === '\t' || c === '\n' || c === '\r';
const isDigit = (c) => c >= '0' && c <= '9';
const ESCAPES = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };

/** What a character is called in a message: itself, quoted, or its code. */
function named(c) {
  if (c === undefined) return 'the end of the text';
  const code = c.charCodeAt(0);
  if (code < 0x20 || code === 0x7f) return `the control character U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
  return `“${c}”`;
}

/** Reads one JSON text (RFC 8259), or throws JsonSyntaxError saying where it is wrong. */
export function parseJson(text) {
  let i = 0;

  const fail = (reason, at = i) => {
    let line = 1;
    let lineStart = 0;
    for (let k = 0; k < at && k < text.length; k += 1) {
      if (text[k] === '\n') {
        line += 1;
        lineStart = k + 1;
      }
    }
    throw new JsonSyntaxError(reason, line, at - lineStart + 1);
  };
  const skipSpace = () => {
    while (isSpace(text[i])) i += 1;
  };
  const expectWord = (word, value) => {
    if (text.startsWith(word, i)) {
      i += word.length;
      return value;
    }
    return fail(`expected “${word}”`);
  };

  const readString = () => {
    i += 1; // the opening quote
    let out = '';
    let start = i;
    for (;;) {
      const c = text[i];
      if (c === undefined) fail('a string is not closed with “"”');
      if (c === '"') break;
      if (c < ' ') fail(`${named(c)} must be escaped inside a string`);
      if (c !== '\\') {
        i += 1;
        continue;
      }
      out += text.slice(start, i);
      const e = text[i + 1];
      if (e === 'u') {
        const hex = text.slice(i + 2, i + 6);
        if (!/^[0-9A-Fa-f]{4}$/.test(hex)) fail('\\u is followed by four hexadecimal digits', i);
        out += String.fromCharCode(parseInt(hex, 16));
        i += 6;
      } else if (e !== undefined && Object.hasOwn(ESCAPES, e)) {
        out += ESCAPES[e];
        i += 2;
      } else {
        fail(`“\\${e ?? ''}” is not an escape JSON knows`, i);
      }
      start = i;
    }
    out += text.slice(start, i);
    i += 1; // the closing quote
    return out;
  };

  const readNumber = () => {
    const start = i;
    if (text[i] === '-') i += 1;
    if (text[i] === '0') {
      i += 1;
      if (isDigit(text[i])) fail('a number does not start with 0 unless it is 0 or 0.…');
    } else if (isDigit(text[i])) {
      while (isDigit(text[i])) i += 1;
    } else {
      fail(`expected a digit, found ${named(text[i])}`);
    }
    if (text[i] === '.') {
      i += 1;
      if (!isDigit(text[i])) fail(`expected a digit after “.”, found ${named(text[i])}`);
      while (isDigit(text[i])) i += 1;
    }
    if (text[i] === 'e' || text[i] === 'E') {
      i += 1;
      if (text[i] === '+' || text[i] === '-') i += 1;
      if (!isDigit(text[i])) fail(`expected a digit in the exponent, found ${named(text[i])}`);
      while (isDigit(text[i])) i += 1;
    }
    return new JsonNumber(text.slice(start, i));
  };

  const readValue = (depth) => {
    if (depth > MAX_DEPTH) fail(`values are nested more than ${MAX_DEPTH} deep`);
    skipSpace();
    const c = text[i];
    if (c === '{') {
      i += 1;
      const members = new Map();
      skipSpace();
      if (text[i] === '}') {
        i += 1;
        return members;
      }
      for (;;) {
        skipSpace();
        if (text[i] !== '"') fail(`expected a member name in quotes, found ${named(text[i])}`);
        const name = readString();
        skipSpace();
        if (text[i] !== ':') fail(`expected “:” after the member name, found ${named(text[i])}`);
        i += 1;
        members.set(name, readValue(depth + 1));
        skipSpace();
        if (text[i] === ',') {
          i += 1;
          continue;
        }
        if (text[i] === '}') {
          i += 1;
          return members;
        }
        fail(`expected “,” or “}” after a member, found ${named(text[i])}`);
      }
    }
    if (c === '[') {
      i += 1;
      const items = [];
      skipSpace();
      if (text[i] === ']') {
        i += 1;
        return items;
      }
      for (;;) {
        items.push(readValue(depth + 1));
        skipSpace();
        if (text[i] === ',') {
          i += 1;
          continue;
        }
        if (text[i] === ']') {
          i += 1;
          return items;
        }
        fail(`expected “,” or “]” after an item, found ${named(text[i])}`);
      }
    }
    if (c === '"') return readString();
    if (c === '-' || isDigit(c)) return readNumber();
    if (c === 't') return expectWord('true', true);
    if (c === 'f') return expectWord('false', false);
    if (c === 'n') return expectWord('null', null);
    return fail(`expected a value, found ${named(c)}`);
  };

  const value = readValue(0);
  skipSpace();
  if (i < text.length) fail(`expected the end of the text after the value, found ${named(text[i])}`);
  return value;
}

/** The parse error of a text as one line, or null when the text is JSON. */
export function jsonProblem(text) {
  try {
    parseJson(text);
    return null;
  } catch (error) {
    if (error instanceof JsonSyntaxError) return error.message;
    throw error;
  }
}

/** Compact JSON text for a parsed value. */
export function writeJson(value) {
  if (value instanceof Map) {
    return `{${Array.from(value, ([name, member]) => `${JSON.stringify(name)}:${writeJson(member)}`).join(',')}}`;
  }
  if (Array.isArray(value)) return `[${value.map(writeJson).join(',')}]`;
  if (value instanceof JsonNumber) return value.text;
  return JSON.stringify(value); // strings, true, false, null
}

/** Whether two parsed values are the same JSON (numbers by their text, members in any order). */
export function sameJson(a, b) {
  if (a instanceof Map || b instanceof Map) {
    if (!(a instanceof Map && b instanceof Map) || a.size !== b.size) return false;
    for (const [name, member] of a) {
      if (!b.has(name) || !sameJson(member, b.get(name))) return false;
    }
    return true;
  }
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((item, k) => sameJson(item, b[k]));
  }
  if (a instanceof JsonNumber || b instanceof JsonNumber) {
    return a instanceof JsonNumber && b instanceof JsonNumber && a.text === b.text;
  }
  return a === b;
}

/**
 * Whether a value can be a member's new value in a merge patch: a merge patch reads
 * null as "remove", so null cannot be set, neither as the member nor inside an object
 * the patch would merge (arrays are set whole, nulls inside them included).
 */
function settable(value) {
  if (value === null) return false;
  if (value instanceof Map) {
    for (const member of value.values()) if (!settable(member)) return false;
  }
  return true;
}

/**
 * The JSON merge patch (RFC 7386) that turns `original` into `edited`: changed members
 * with their new values, removed ones as null, objects merged member by member, and
 * arrays and other values set whole. Null when a merge patch cannot say it: either
 * value is not an object (the whole value changes), or a member is set to null.
 */
export function mergePatch(original, edited) {
  if (!(original instanceof Map && edited instanceof Map)) return null;
  const patch = new Map();
  for (const name of original.keys()) {
    if (!edited.has(name)) patch.set(name, null);
  }
  for (const [name, value] of edited) {
    const before = original.get(name);
    if (original.has(name) && sameJson(before, value)) continue;
    if (original.has(name) && before instanceof Map && value instanceof Map) {
      const inner = mergePatch(before, value);
      if (inner === null) return null;
      patch.set(name, inner);
    } else {
      if (!settable(value)) return null;
      patch.set(name, value);
    }
  }
  return patch;
}

/** Applies a merge patch to a value as RFC 7386 says (the server's part; the checks use it). */
export function applyMergePatch(target, patch) {
  if (!(patch instanceof Map)) return patch;
  const result = target instanceof Map ? new Map(target) : new Map();
  for (const [name, value] of patch) {
    if (value === null) result.delete(name);
    else result.set(name, applyMergePatch(result.get(name), value));
  }
  return result;
}

/**
 * Whether an edit (original → edited) and someone else's change made meanwhile
 * (original → current) touch different members, so the edit's merge patch applied to
 * the current value keeps both. Members both changed agree only when both made them the
 * same, or both are objects still and their members do not collide.
 */
export function editsApart(original, edited, current) {
  if (!(original instanceof Map && edited instanceof Map && current instanceof Map)) return false;
  const names = new Set([...original.keys(), ...edited.keys(), ...current.keys()]);
  for (const name of names) {
    const before = original.get(name);
    const mine = edited.get(name);
    const theirs = current.get(name);
    const mineChanged = original.has(name) !== edited.has(name) || !sameJson(before, mine);
    const theirsChanged = original.has(name) !== current.has(name) || !sameJson(before, theirs);
    if (!mineChanged || !theirsChanged) continue;
    if (edited.has(name) === current.has(name) && sameJson(mine, theirs)) continue;
    if (!editsApart(before, mine, theirs)) return false;
  }
  return true;
}

// ---------------------------------------------------------------------------
// JSON text in the editor
// ---------------------------------------------------------------------------

/** application/json, or any type ending in +json (parameters ignored). */
export function isJsonType(contentType) {
  const type = contentType.split(';')[0].trim().toLowerCase();
  return type === 'application/json' || type.endsWith('+json');
}

/** A JSON value's text parsed, when it is an object; null otherwise. */
export function jsonObject(text) {
  try {
    const value = parseJson(text);
    return value instanceof Map ? value : null;
  } catch {
    return null;
  }
}

/** Whether a text is a JSON object or array (worth offering to format). */
export function looksLikeJsonContainer(text) {
  const start = text.trimStart()[0];
  return (start === '{' || start === '[') && jsonProblem(text) === null;
}

/**
 * Re-indents valid JSON with two spaces, as JSON.stringify(value, null, 2) would,
 * but without parsing it: numbers past double precision and string escapes stay
 * exactly as written. Call it only with text JSON.parse accepts.
 */
export function prettyJson(text) {
  let out = '';
  let depth = 0;
  const newline = () => `\n${'  '.repeat(depth)}`;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i];
    if (c === '"') {
      let end = i + 1;
      while (text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      out += text.slice(i, end + 1);
      i = end;
    } else if (isSpace(c)) {
      // Whitespace between tokens is replaced by the layout.
    } else if (c === '{' || c === '[') {
      const close = c === '{' ? '}' : ']';
      let next = i + 1;
      while (isSpace(text[next])) next += 1;
      if (text[next] === close) {
        out += c + close;
        i = next;
      } else {
        depth += 1;
        out += c + newline();
      }
    } else if (c === '}' || c === ']') {
      depth -= 1;
      out += newline() + c;
    } else if (c === ',') {
      out += `,${newline()}`;
    } else if (c === ':') {
      out += ': ';
    } else {
      out += c;
    }
  }
  return out;
}
