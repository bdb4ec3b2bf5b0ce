// How the console shows what the API holds: times relative to now (kept current while
// the page stays open), who made a change, sizes, and items that are binary or secret.

import { el } from './elements.js?v={{version}}';
import { isJsonType, jsonProblem, prettyJson } from './json.js?v={{version}}';

/** How often the relative times on the page are brought up to date. */
export const AGE_REFRESH_MS = 30000;

/** "just now", "3 min ago", "in 2 h": a time relative to now. */
export function relativeTime(iso, now = Date.now()) {
  const time = Date.parse(iso);
  if (Number.isNaN(time)) return 'unknown';
  const seconds = Math.round((now - time) / 1000);
  const future = seconds < 0;
  const span = Math.abs(seconds);
  if (span < 10) return future ? 'in a moment' : 'just now';
  let text;
  if (span < 60) text = `${span} s`;
  else if (span < 3600) text = `${Math.floor(span / 60)} min`;
  else if (span < 86400) text = `${Math.floor(span / 3600)} h`;
  else if (span < 86400 * 60) text = `${Math.floor(span / 86400)} d`;
  else if (span < 86400 * 730) text = `${Math.floor(span / (86400 * 30))} months`;
  else text = `${Math.floor(span / (86400 * 365))} years`;
  return future ? `in ${text}` : `${text} ago`;
}

/**
 * Who made a change, as a person reads it: a token's description, else kind:id
 * (iam:ARN, local:user@host); "someone unknown" for a change recorded without.
 */
export function whoMadeIt(event) {
  const by = event && event.by;
  if (!by) return 'someone unknown';
  return by.description || `${by.kind}:${by.id}`;
}

/** A <time> showing a relative age, the ISO time as its title; refreshed periodically. */
export function ageElement(iso, prefix = '') {
  const time = el('time', { datetime: iso, title: iso, 'data-age': iso, 'data-prefix': prefix });
  time.textContent = prefix + relativeTime(iso);
  return time;
}

export function refreshAges() {
  for (const time of document.querySelectorAll('time[data-age]')) {
    time.textContent = (time.dataset.prefix || '') + relativeTime(time.dataset.age);
  }
}

/** The number of bytes a base64 text decodes to. */
export function base64Length(text) {
  const clean = text.replace(/\s/g, '');
  const padding = clean.endsWith('==') ? 2 : clean.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((clean.length * 3) / 4) - padding);
}

/** When an item expires (the API's field is expiresAt; expires is accepted too). */
export const expiryOf = (item) => (item && (item.expiresAt || item.expires)) || null;

export const isBinary = (item) => Boolean(item && item.encoding === 'base64');

/** A secret: sealed in the client; the API holds and returns only its ciphertext. */
export const SECRET_TYPE = 'application/vnd.discfg.secret';
export const SECRET_MASK = '(secret)';
export const isSecret = (item) => Boolean(item && item.contentType === SECRET_TYPE);

/** How a value is shown as text in the conflict view. */
export function displayValue(item) {
  if (isSecret(item)) return SECRET_MASK;
  if (isBinary(item)) return `binary value, ${base64Length(item.value)} bytes`;
  return item.value;
}

/**
 * How a value is shown to be read (the editor, history, the config at a revision): as
 * displayValue, and a JSON value indented. Only the layout changes: numbers, escapes and
 * member order stay as stored.
 */
export function readableValue(item) {
  const text = displayValue(item);
  if (isSecret(item) || isBinary(item) || !isJsonType(item.contentType || '') || jsonProblem(text) !== null) return text;
  return prettyJson(text);
}
