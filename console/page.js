// What every view of the console shares: the page's elements (`ui`), building
// elements as text (`el`), messages, navigation between views, and how times, sizes
// and JSON are shown. Everything from the API is written as text, never as HTML.

import { storedToken } from './api.js?v={{version}}';
import { state } from './state.js?v={{version}}';
import { showConfigs } from './configs.js?v={{version}}';
import { openConfig } from './keys.js?v={{version}}';
import { newKey } from './editor.js?v={{version}}';
import { showTokens } from './tokens.js?v={{version}}';
import { diffLines } from './diff.js?v={{version}}';
import { jsonProblem, mergePatch, parseJson } from './json.js?v={{version}}';

export const CONFIG_NAME = /^[A-Za-z0-9_.-]{1,200}$/;
export const RECONNECT_DELAY_MS = 1000;
export const MAX_RETRY_AFTER_MS = 30000;
export const FLASH_MS = 8000;
export const AGE_REFRESH_MS = 30000;
export const LONG_POLL_SECONDS = 25;
export const TOKENS_HASH = '#tokens';

// ---------------------------------------------------------------------------
// DOM helpers
// ---------------------------------------------------------------------------

export const $ = (id) => document.getElementById(id);

/**
 * Creates an element. `attrs` are attributes (null, undefined and false are left
 * out; `className` sets the class); children are nodes or strings, and strings
 * become text nodes, so data is never parsed as markup.
 */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (name === 'className') node.className = value;
    else node.setAttribute(name, value === true ? '' : String(value));
  }
  node.append(...children);
  return node;
}

export const ui = {
  loading: $('loading'),
  signout: $('signout'),
  configsNav: $('configs-nav'),
  tokensNav: $('tokens-nav'),
  signinView: $('signin-view'),
  signin: $('signin'),
  token: $('token'),
  signinSubmit: $('signin-submit'),
  signinError: $('signin-error'),

  configsView: $('configs-view'),
  configsHeading: $('configs-heading'),
  configs: $('configs'),
  newConfig: $('new-config'),
  newConfigName: $('new-config-name'),
  newConfigSubmit: $('new-config-submit'),
  configsError: $('configs-error'),

  tokensView: $('tokens-view'),
  tokensHeading: $('tokens-heading'),
  tokensRefused: $('tokens-refused'),
  tokensBody: $('tokens-body'),
  tokens: $('tokens'),
  newToken: $('new-token'),
  newTokenRole: $('new-token-role'),
  newTokenConfigs: $('new-token-configs'),
  newTokenDescription: $('new-token-description'),
  newTokenSubmit: $('new-token-submit'),
  issued: $('issued'),
  issuedHeading: $('issued-heading'),
  issuedToken: $('issued-token'),
  issuedCopy: $('issued-copy'),
  issuedDone: $('issued-done'),
  tokensError: $('tokens-error'),

  configView: $('config-view'),
  back: $('back'),
  configTitle: $('config-title'),
  configRevision: $('config-revision'),
  liveStatus: $('live-status'),
  configError: $('config-error'),
  deleteConfig: $('delete-config'),
  deleteConfigForm: $('delete-config-form'),
  deleteConfigLabel: $('delete-config-label'),
  deleteConfigConfirm: $('delete-config-confirm'),
  deleteConfigSubmit: $('delete-config-submit'),
  deleteConfigCancel: $('delete-config-cancel'),
  deleteConfigError: $('delete-config-error'),
  panes: $('panes'),

  atRevisionToggle: $('at-revision-toggle'),
  atRevisionForm: $('at-revision-form'),
  atRevision: $('at-revision'),
  atRevisionSubmit: $('at-revision-submit'),
  atRevisionCancel: $('at-revision-cancel'),
  atRevisionError: $('at-revision-error'),
  snapshot: $('snapshot'),
  snapshotHeading: $('snapshot-heading'),
  snapshotDownload: $('snapshot-download'),
  snapshotClose: $('snapshot-close'),
  snapshotCount: $('snapshot-count'),
  snapshotKeys: $('snapshot-keys'),

  transferToggle: $('transfer-toggle'),
  transfer: $('transfer'),
  exportFormat: $('export-format'),
  exportDownload: $('export-download'),
  importForm: $('import-form'),
  importFile: $('import-file'),
  importFormat: $('import-format'),
  importReplace: $('import-replace'),
  importReplaceBox: $('import-replace-box'),
  importReplaceLabel: $('import-replace-label'),
  importReplaceConfirm: $('import-replace-confirm'),
  importSubmit: $('import-submit'),
  transferClose: $('transfer-close'),
  transferStatus: $('transfer-status'),
  transferError: $('transfer-error'),

  keyFilter: $('key-filter'),
  keyCount: $('key-count'),
  keys: $('keys'),
  newKey: $('new-key'),

  editorEmpty: $('editor-empty'),
  editor: $('editor'),
  editorHeading: $('editor-heading'),
  editorForm: $('editor-form'),
  keyPath: $('key-path'),
  keyPathHint: $('key-path-hint'),
  meta: $('meta'),
  metaExpiry: $('meta-expiry'),
  ttlNote: $('ttl-note'),
  binaryNote: $('binary-note'),
  secret: $('secret'),
  secretNote: $('secret-note'),
  secretKeyField: $('secret-key-field'),
  secretKey: $('secret-key'),
  secretReveal: $('secret-reveal'),
  secretHide: $('secret-hide'),
  secretValue: $('secret-value'),
  secretError: $('secret-error'),
  valueField: $('value-field'),
  value: $('value'),
  contentType: $('content-type'),
  mergeField: $('merge-field'),
  mergePatch: $('merge-patch'),
  violations: $('violations'),
  violationList: $('violation-list'),
  schemaInfo: $('schema-info'),
  schemaView: $('schema-view'),
  schemaViewHeading: $('schema-view-heading'),
  schemaText: $('schema-text'),
  save: $('save'),
  formatJson: $('format-json'),
  deleteKey: $('delete'),
  historyToggle: $('history-toggle'),
  history: $('history'),
  historyHeading: $('history-heading'),
  historyList: $('history-list'),
  historyMore: $('history-more'),
  historyError: $('history-error'),
  diff: $('diff'),
  diffHeading: $('diff-heading'),
  diffSummary: $('diff-summary'),
  diffLines: $('diff-lines'),
  dirty: $('dirty'),
  deleteConfirm: $('delete-confirm'),
  deleteConfirmText: $('delete-confirm-text'),
  deleteConfirmYes: $('delete-confirm-yes'),
  deleteConfirmNo: $('delete-confirm-no'),
  editorMessage: $('editor-message'),
  changedNotice: $('changed-notice'),
  changedNoticeText: $('changed-notice-text'),
  changedLoad: $('changed-load'),

  conflict: $('conflict'),
  conflictHeading: $('conflict-heading'),
  conflictMine: $('conflict-mine'),
  conflictTheirs: $('conflict-theirs'),
  conflictTheirsHeading: $('conflict-theirs-heading'),
  conflictReapply: $('conflict-reapply'),
  conflictDiscard: $('conflict-discard'),

  flash: $('flash'),
};

// ---------------------------------------------------------------------------
// Small formatting helpers
// ---------------------------------------------------------------------------

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

/** A <time> showing a relative age, the ISO time as its title; refreshed periodically. */
/**
 * Who made a change, as a person reads it: a token's description, else kind:id
 * (iam:ARN, local:user@host); "someone unknown" for a change recorded without.
 */
export function whoMadeIt(event) {
  const by = event && event.by;
  if (!by) return 'someone unknown';
  return by.description || `${by.kind}:${by.id}`;
}

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

// ---------------------------------------------------------------------------
// JSON
// ---------------------------------------------------------------------------

/** application/json, or any type ending in +json (parameters ignored). */
export function isJsonType(contentType) {
  const type = contentType.split(';')[0].trim().toLowerCase();
  return type === 'application/json' || type.endsWith('+json');
}

/** The parse error of a text that is not JSON (line, column and why), or null when it is. */
export const jsonError = jsonProblem;

/** The media type of a JSON merge patch (RFC 7386). */
export const MERGE_PATCH_TYPE = 'application/merge-patch+json';

/** How many times a merge patch is sent again over changes to other members. */
export const MERGE_ATTEMPTS = 3;

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
  return (start === '{' || start === '[') && jsonError(text) === null;
}

export const isJsonSpace = (c) => c === ' ' || c === '\t' || c === '\n' || c === '\r';

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
    } else if (isJsonSpace(c)) {
      // Whitespace between tokens is replaced by the layout.
    } else if (c === '{' || c === '[') {
      const close = c === '{' ? '}' : ']';
      let next = i + 1;
      while (isJsonSpace(text[next])) next += 1;
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

// ---------------------------------------------------------------------------
// Messages
// ---------------------------------------------------------------------------

export let flashTimer = 0;

/** A short status message in the polite live region. */
export function flash(message) {
  clearTimeout(flashTimer);
  ui.flash.textContent = message;
  flashTimer = setTimeout(() => { ui.flash.textContent = ''; }, FLASH_MS);
}

export function clearErrors() {
  for (const area of [
    ui.configsError, ui.configError, ui.deleteConfigError, ui.editorMessage, ui.tokensError,
    ui.atRevisionError, ui.transferError, ui.transferStatus, ui.historyError, ui.secretError,
  ]) {
    area.textContent = '';
  }
}

// ---------------------------------------------------------------------------
// Views and navigation
// ---------------------------------------------------------------------------

/** Shows one of the views: 'signin', 'configs', 'config' or 'tokens'. */
export function showView(name) {
  ui.loading.hidden = true;
  ui.signinView.hidden = name !== 'signin';
  ui.configsView.hidden = name !== 'configs';
  ui.configView.hidden = name !== 'config';
  ui.tokensView.hidden = name !== 'tokens';
  for (const button of [ui.configsNav, ui.tokensNav]) button.hidden = name === 'signin';
  // Without a token (a server that needs none) there is nothing to sign out of.
  ui.signout.hidden = name === 'signin' || !storedToken();
  setCurrentNav(ui.configsNav, name === 'configs');
  setCurrentNav(ui.tokensNav, name === 'tokens');
  if (name !== 'tokens') {
    // A token just issued is shown once: leaving the view forgets it.
    ui.issuedToken.value = '';
    ui.issued.hidden = true;
  }
}

export function setCurrentNav(button, current) {
  if (current) button.setAttribute('aria-current', 'page');
  else button.removeAttribute('aria-current');
}

/** The config named in the address (#/name), or null. */
export function configFromHash() {
  const hash = window.location.hash;
  if (!hash.startsWith('#/')) return null;
  try {
    const name = decodeURIComponent(hash.slice(2));
    return CONFIG_NAME.test(name) ? name : null;
  } catch {
    return null;
  }
}

/**
 * Opens a config (or the list, for null; the tokens for TOKENS_HASH) and records it in
 * the address and history.
 */
export function navigate(config) {
  const hash = config === TOKENS_HASH ? TOKENS_HASH : config ? `#/${encodeURIComponent(config)}` : '';
  if (window.location.hash !== hash) {
    window.history.pushState(null, '', hash || window.location.pathname + window.location.search);
  }
  route();
}

/** Shows what the address names. `configs` is a listing already fetched, if any. */
export function route(configs) {
  if (!state.signedIn) return;
  if (window.location.hash === TOKENS_HASH) {
    showTokens();
    return;
  }
  const name = configFromHash();
  if (name) {
    if (!state.session || state.session.name !== name) openConfig(name);
  } else {
    showConfigs(configs);
  }
}
