// discfg web console.
//
// Signs in with a bearer token (or goes straight in where the server needs none), lists
// configs, shows a config's keys as a tree, edits values with compare-and-swap
// (If-Match; a JSON object's edit as a merge patch of the members changed) and follows
// the config's changes live over Server-Sent Events read with fetch().
//
// Everything that comes from the API (names, keys, values, messages) is written with
// textContent, text nodes or input values, never parsed as HTML. The page runs under
// a strict Content-Security-Policy: no inline script or style, requests to this origin
// only, forms never submitted by the browser (every submit is handled here).

const TOKEN_KEY = 'discfg.token';
const CONFIG_NAME = /^[A-Za-z0-9_.-]{1,200}$/;
const RECONNECT_DELAY_MS = 1000;
const MAX_RETRY_AFTER_MS = 30000;
const FLASH_MS = 8000;
const AGE_REFRESH_MS = 30000;
const LONG_POLL_SECONDS = 25;

// The page is served at <base>/ui/, the API at <base>/v1, so the console also works
// behind a path prefix (an API Gateway stage, a reverse proxy).
import { diffLines } from './diff.js?v={{version}}';
import { editsApart, jsonProblem, mergePatch, parseJson, writeJson } from './json.js?v={{version}}';
import { SCHEMA_NAMESPACE, schemasFor } from './schemas.js?v={{version}}';
import { acceptsLegacySeals, base64Bytes, importKeyFile, openSealed, unwrapDataKey } from './sealed.js?v={{version}}';

const API = new URL('../v1', window.location.href).pathname;
const TOKENS_URL = new URL('../admin/tokens', window.location.href).pathname;
const TOKENS_HASH = '#tokens';

// ---------------------------------------------------------------------------
// DOM helpers
// ---------------------------------------------------------------------------

const $ = (id) => document.getElementById(id);

/**
 * Creates an element. `attrs` are attributes (null, undefined and false are left
 * out; `className` sets the class); children are nodes or strings, and strings
 * become text nodes, so data is never parsed as markup.
 */
function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (name === 'className') node.className = value;
    else node.setAttribute(name, value === true ? '' : String(value));
  }
  node.append(...children);
  return node;
}

const ui = {
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
// State
// ---------------------------------------------------------------------------

/** Whether a token has been accepted (the configs view or a config is showing). */
let signedIn = false;

/**
 * The open config, or null. A new object each time a config is opened: async work
 * checks it is still the current one before touching the page, and its controller
 * cancels its requests and its watch.
 */
let session = null;

/**
 * The key in the editor, or null:
 * { key, isNew, item, baseRevision, originalValue, originalContentType, originalJson,
 *   readOnly, busy, pending, latest, schemaShown }
 * baseRevision is the modRevision the edit started from (sent as If-Match);
 * originalJson the loaded value parsed, when it is a JSON object (its edits are saved
 * as a merge patch); pending holds a live change that arrived during a save; latest
 * the change behind the changed-underneath notice; schemaShown the target of the
 * schema being read.
 */
let editor = null;

/** The refused save being shown in the conflict view: { key, value, contentType, current }. */
let conflict = null;

/** Increases with every key opened, so a slow answer for an older one is dropped. */
let openTicket = 0;

function newSession(name) {
  return {
    name,
    revision: 0,
    items: new Map(), // key → item
    changed: new Set(), // keys changed live since the config was opened
    collapsed: new Set(), // folder paths the user closed
    filterCollapsed: new Set(), // the same while a filter is typed
    lastEventId: null, // the watch resumes after this event
    polling: false, // true when the server cannot stream (API Gateway): long-poll
    renderQueued: false,
    controller: new AbortController(),
    encryption: undefined, // the config's encryption settings, read when a secret is shown
    fileKey: null, // the key file given to reveal secrets (a CryptoKey), this config only
    dataKeys: new Map(), // data key id → CryptoKey, opened with fileKey
    snapshotRevision: null, // the revision shown read-only, if any
    schemas: null, // the targets of the config's schemas (GET schemas), null until read
    schemasError: '', // why they could not be read
    schemasQueued: false, // a read of them is due
  };
}

// ---------------------------------------------------------------------------
// The API
// ---------------------------------------------------------------------------

/** An error answer of the API: its HTTP status, error code, message and field. */
class ApiError extends Error {
  constructor(status, code, message, field) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
    this.field = field;
    this.retryAfter = 0;
    this.violations = []; // for schemaViolation: [{ key, pointer, keyword, message }]
  }
}

const isAbort = (error) => error && error.name === 'AbortError';

function storedToken() {
  return sessionStorage.getItem(TOKEN_KEY);
}

/**
 * Calls the API: adds the bearer token, sends `body` as is, and returns the parsed
 * JSON envelope, or the Response itself with `raw` (for streams). Error answers are
 * thrown as ApiError with the envelope's code and message; a failed connection as an
 * ApiError with status 0. An aborted request throws the AbortError.
 */
async function api(method, path, { body, headers = {}, signal, raw = false } = {}) {
  const init = { method, headers: { Accept: 'application/json', ...headers }, signal, cache: 'no-store' };
  const token = storedToken();
  if (token) init.headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) init.body = body;

  let response;
  try {
    response = await fetch(path, init);
  } catch (error) {
    if (isAbort(error)) throw error;
    throw new ApiError(0, 'network', 'Could not reach the server. Check the connection and try again.');
  }
  if (!response.ok) throw await errorFrom(response);
  if (raw) return response;

  const text = await response.text();
  if (!text) return {};
  try {
    return JSON.parse(text);
  } catch {
    throw new ApiError(response.status, 'badResponse', 'The server answered with something that is not JSON.');
  }
}

/** The ApiError for an error answer, from its envelope when it has one. */
async function errorFrom(response) {
  let envelope = null;
  try {
    envelope = await response.json();
  } catch {
    // Not JSON (a proxy's page, say): the status says what happened.
  }
  const error = envelope && typeof envelope.error === 'object' ? envelope.error : {};
  const message = typeof error.message === 'string' && error.message
    ? error.message
    : `The server answered ${response.status} ${response.statusText}`.trim();
  const apiError = new ApiError(response.status, error.code || 'http', message, error.field);
  apiError.retryAfter = Number(response.headers.get('Retry-After')) || 0;
  if (Array.isArray(error.violations)) apiError.violations = error.violations.filter((v) => v && typeof v === 'object');
  return apiError;
}

const configUrl = (name) => `${API}/${encodeURIComponent(name)}`;

/** A key's path for a URL: without the leading slash, each segment encoded. */
const keySegments = (key) => key.replace(/^\//, '').split('/').map(encodeURIComponent).join('/');

/** The URL of a key. */
const keyUrl = (config, key) => `${configUrl(config)}/keys/${keySegments(key)}`;

/** The URL of a key's history. */
const historyUrl = (config, key) => `${configUrl(config)}/history/${keySegments(key)}`;

/** An ETag for If-Match: the modRevision, quoted. */
const etag = (revision) => `"${revision}"`;

/**
 * Shows an error in `area`, except a 401 (the token is missing or no longer valid),
 * which signs out with the message on the sign-in form.
 */
function showFailure(error, area) {
  if (isAbort(error)) return;
  if (error.status === 401) {
    signOut(error.message);
    return;
  }
  area.textContent = error.message || String(error);
}

// ---------------------------------------------------------------------------
// Small formatting helpers
// ---------------------------------------------------------------------------

/** "just now", "3 min ago", "in 2 h": a time relative to now. */
function relativeTime(iso, now = Date.now()) {
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
function ageElement(iso, prefix = '') {
  const time = el('time', { datetime: iso, title: iso, 'data-age': iso, 'data-prefix': prefix });
  time.textContent = prefix + relativeTime(iso);
  return time;
}

function refreshAges() {
  for (const time of document.querySelectorAll('time[data-age]')) {
    time.textContent = (time.dataset.prefix || '') + relativeTime(time.dataset.age);
  }
}

/** The number of bytes a base64 text decodes to. */
function base64Length(text) {
  const clean = text.replace(/\s/g, '');
  const padding = clean.endsWith('==') ? 2 : clean.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((clean.length * 3) / 4) - padding);
}

/** When an item expires (the API's field is expiresAt; expires is accepted too). */
const expiryOf = (item) => (item && (item.expiresAt || item.expires)) || null;

const isBinary = (item) => Boolean(item && item.encoding === 'base64');

/** A secret: sealed in the client; the API holds and returns only its ciphertext. */
const SECRET_TYPE = 'application/vnd.discfg.secret';
const SECRET_MASK = '(secret)';
const isSecret = (item) => Boolean(item && item.contentType === SECRET_TYPE);

/** How a value is shown as text in the conflict view. */
function displayValue(item) {
  if (isSecret(item)) return SECRET_MASK;
  if (isBinary(item)) return `binary value, ${base64Length(item.value)} bytes`;
  return item.value;
}

// ---------------------------------------------------------------------------
// JSON
// ---------------------------------------------------------------------------

/** application/json, or any type ending in +json (parameters ignored). */
function isJsonType(contentType) {
  const type = contentType.split(';')[0].trim().toLowerCase();
  return type === 'application/json' || type.endsWith('+json');
}

/** The parse error of a text that is not JSON (line, column and why), or null when it is. */
const jsonError = jsonProblem;

/** The media type of a JSON merge patch (RFC 7386). */
const MERGE_PATCH_TYPE = 'application/merge-patch+json';

/** How many times a merge patch is sent again over changes to other members. */
const MERGE_ATTEMPTS = 3;

/** A JSON value's text parsed, when it is an object; null otherwise. */
function jsonObject(text) {
  try {
    const value = parseJson(text);
    return value instanceof Map ? value : null;
  } catch {
    return null;
  }
}

/** Whether a text is a JSON object or array (worth offering to format). */
function looksLikeJsonContainer(text) {
  const start = text.trimStart()[0];
  return (start === '{' || start === '[') && jsonError(text) === null;
}

const isJsonSpace = (c) => c === ' ' || c === '\t' || c === '\n' || c === '\r';

/**
 * Re-indents valid JSON with two spaces, as JSON.stringify(value, null, 2) would,
 * but without parsing it: numbers past double precision and string escapes stay
 * exactly as written. Call it only with text JSON.parse accepts.
 */
function prettyJson(text) {
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

let flashTimer = 0;

/** A short status message in the polite live region. */
function flash(message) {
  clearTimeout(flashTimer);
  ui.flash.textContent = message;
  flashTimer = setTimeout(() => { ui.flash.textContent = ''; }, FLASH_MS);
}

function clearErrors() {
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
function showView(name) {
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

function setCurrentNav(button, current) {
  if (current) button.setAttribute('aria-current', 'page');
  else button.removeAttribute('aria-current');
}

/** The config named in the address (#/name), or null. */
function configFromHash() {
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
function navigate(config) {
  const hash = config === TOKENS_HASH ? TOKENS_HASH : config ? `#/${encodeURIComponent(config)}` : '';
  if (window.location.hash !== hash) {
    window.history.pushState(null, '', hash || window.location.pathname + window.location.search);
  }
  route();
}

/** Shows what the address names. `configs` is a listing already fetched, if any. */
function route(configs) {
  if (!signedIn) return;
  if (window.location.hash === TOKENS_HASH) {
    showTokens();
    return;
  }
  const name = configFromHash();
  if (name) {
    if (!session || session.name !== name) openConfig(name);
  } else {
    showConfigs(configs);
  }
}

// ---------------------------------------------------------------------------
// Sign-in and sign-out
// ---------------------------------------------------------------------------

async function onSignIn(event) {
  event.preventDefault();
  const token = ui.token.value.trim();
  // Header values are ASCII; anything else could not be sent at all.
  if (!/^[\x21-\x7e]*$/.test(token)) {
    ui.signinError.textContent = 'A token is printable ASCII without spaces.';
    ui.token.focus();
    return;
  }
  // An empty token asks again without one (the server may have been unreachable).
  if (token) sessionStorage.setItem(TOKEN_KEY, token);
  else sessionStorage.removeItem(TOKEN_KEY);
  ui.signinSubmit.disabled = true;
  ui.signinError.textContent = '';
  try {
    await enter();
  } finally {
    ui.signinSubmit.disabled = false;
  }
}

/**
 * Lists configs with the stored token, or with none, and shows the console, or the
 * sign-in form when the server refuses. This is how the console learns whether the
 * server needs a token at all: one that does answers 401 (with WWW-Authenticate:
 * Bearer), one that does not (serve on loopback before any token exists, --auth none)
 * lists the configs, and the console goes straight to them.
 *
 * `opening`: the page just opened and nobody typed a token, so a 401 is only the
 * server saying it needs one: the sign-in form asks for it without an error.
 */
async function enter({ opening = false } = {}) {
  let envelope;
  try {
    envelope = await api('GET', `${API}/configs`);
  } catch (error) {
    if (error.status === 401 || error.status === 403) {
      sessionStorage.removeItem(TOKEN_KEY);
      ui.token.value = '';
    } else {
      // Not the token's fault (the server is down, say): keep it to try again.
      ui.token.value = storedToken() || '';
    }
    showSignIn(opening && error.status === 401 ? '' : error.message);
    return;
  }
  signedIn = true;
  ui.token.value = '';
  route(envelope.configs || []);
}

function showSignIn(message = '') {
  showView('signin');
  ui.signinError.textContent = message;
  ui.token.focus();
}

/** Forgets the token, stops everything and returns to the sign-in form. */
function signOut(message = '') {
  closeConfig();
  signedIn = false;
  sessionStorage.removeItem(TOKEN_KEY);
  ui.configs.replaceChildren();
  ui.tokens.replaceChildren();
  tokenList = [];
  clearErrors();
  if (window.location.hash) {
    window.history.replaceState(null, '', window.location.pathname + window.location.search);
  }
  showSignIn(message);
}

// ---------------------------------------------------------------------------
// Configs
// ---------------------------------------------------------------------------

/** Shows the list of configs, fetching it unless `configs` is given. */
async function showConfigs(configs) {
  closeConfig();
  showView('configs');
  clearErrors();
  ui.configsHeading.focus();
  if (configs) {
    renderConfigs(configs);
    return;
  }
  try {
    const envelope = await api('GET', `${API}/configs`);
    if (signedIn && !session) renderConfigs(envelope.configs || []);
  } catch (error) {
    showFailure(error, ui.configsError);
  }
}

function renderConfigs(configs) {
  const sorted = [...configs].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  ui.configs.replaceChildren();
  if (!sorted.length) {
    ui.configs.append(el('li', { className: 'empty' }, 'No configs yet. Create one below.'));
    return;
  }
  for (const config of sorted) {
    const changed = config.modified || config.created;
    const button = el('button', { type: 'button', 'data-config': config.name },
      // The spaces between the parts keep them apart in the button's accessible name.
      el('span', { className: 'config-name' }, config.name), ' ',
      el('span', { className: 'config-meta' }, `revision ${config.revision ?? 0}`), ' ',
      // keyCount is missing for a config whose count the store does not know yet.
      typeof config.keyCount === 'number'
        ? el('span', { className: 'config-meta' }, `${config.keyCount} ${config.keyCount === 1 ? 'key' : 'keys'}`)
        : '', ' ',
      el('span', { className: 'config-meta' }, changed ? ageElement(changed, 'changed ') : ''));
    ui.configs.append(el('li', {}, button));
  }
}

function onConfigClick(event) {
  const button = event.target.closest('button[data-config]');
  if (button) navigate(button.dataset.config);
}

async function onCreateConfig(event) {
  event.preventDefault();
  ui.configsError.textContent = '';
  const name = ui.newConfigName.value.trim();
  if (!CONFIG_NAME.test(name)) {
    ui.configsError.textContent = 'A config name is 1 to 200 letters, digits, “_”, “.” or “-”.';
    ui.newConfigName.focus();
    return;
  }
  ui.newConfigSubmit.disabled = true;
  try {
    await api('PUT', configUrl(name));
    ui.newConfigName.value = '';
    flash(`Created config ${name}`);
    const envelope = await api('GET', `${API}/configs`);
    if (signedIn && !session) renderConfigs(envelope.configs || []);
  } catch (error) {
    showFailure(error, ui.configsError);
  } finally {
    ui.newConfigSubmit.disabled = false;
  }
}

// ---------------------------------------------------------------------------
// One config: keys and the live watch
// ---------------------------------------------------------------------------

async function openConfig(name) {
  closeConfig();
  const current = newSession(name);
  session = current;

  showView('config');
  clearErrors();
  ui.configTitle.textContent = name;
  ui.configRevision.textContent = 'Revision …';
  ui.keyFilter.value = '';
  ui.keys.replaceChildren();
  ui.keyCount.textContent = 'Loading keys…';
  hideDeleteConfig();
  hideAtRevision();
  hideTransfer();
  closeSnapshot(false);
  closeEditor();
  setLive(current, false, 'Connecting…');
  ui.configTitle.focus();

  try {
    await loadKeys(current);
  } catch (error) {
    if (isAbort(error) || current !== session) return;
    ui.keyCount.textContent = '';
    showFailure(error, ui.configError);
    if (error.status === 404) setLive(current, false, 'Not live');
    return;
  }
  watch(current);
}

/** Stops the open config's requests and watch and forgets it. */
function closeConfig() {
  if (!session) return;
  session.controller.abort();
  session = null;
  editor = null;
  conflict = null;
  timeline = null;
}

/** Reads every key of the config, page by page, and redraws the tree. */
async function loadKeys(current) {
  const items = new Map();
  let revision = null;
  let cursor = null;
  do {
    const query = `?recursive&limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const page = await api('GET', `${configUrl(current.name)}/keys${query}`, { signal: current.controller.signal });
    for (const item of page.items || []) items.set(item.key, item);
    // Later pages may be newer; resuming the watch after the first page's revision
    // replays what changed meanwhile, and replays are recognised (applyChange).
    if (revision === null) revision = page.revision ?? 0;
    cursor = page.cursor;
  } while (cursor);

  if (current !== session) return;
  current.items = items;
  current.revision = revision;
  current.lastEventId = String(revision);
  renderRevision();
  renderTree();
  syncEditorWithTree();
  loadSchemas(current);
}

/** Reads the targets of the config's schemas, then shows which check the open key. */
async function loadSchemas(current) {
  try {
    const envelope = await api('GET', `${configUrl(current.name)}/schemas`, { signal: current.controller.signal });
    current.schemas = (envelope.schemas || []).map((schema) => schema && schema.target).filter((target) => typeof target === 'string');
    current.schemasError = '';
  } catch (error) {
    if (isAbort(error)) return;
    current.schemasError = error.message || String(error);
  }
  if (current === session) renderSchemaInfo();
}

/** A schema changed: reads them again, once for a burst of changes. */
function scheduleSchemaLoad(current) {
  if (current.schemasQueued) return;
  current.schemasQueued = true;
  setTimeout(() => {
    current.schemasQueued = false;
    if (current === session) loadSchemas(current);
  }, 0);
}

function renderRevision() {
  if (session) ui.configRevision.textContent = `Revision ${session.revision}`;
}

/** Sets the live status; `text` overrides the words for a state that is not live. */
function setLive(current, live, text) {
  if (current !== session) return;
  ui.liveStatus.textContent = live ? 'Live' : (text || 'Reconnecting…');
  ui.liveStatus.classList.toggle('connected', live);
}

/** Waits `ms` milliseconds, or less if the signal aborts. */
function sleep(ms, signal) {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => { clearTimeout(timer); resolve(); }, { once: true });
  });
}

/**
 * Follows the config's changes until the session ends: a Server-Sent Events stream,
 * reconnected a second after it drops with Last-Event-ID so nothing is missed, or a
 * long poll where the server cannot stream.
 */
async function watch(current) {
  const { signal } = current.controller;
  while (!signal.aborted) {
    let delay = RECONNECT_DELAY_MS;
    try {
      if (current.polling) await pollChanges(current);
      else await streamChanges(current);
    } catch (error) {
      if (signal.aborted) return;
      if (error.status === 401) {
        signOut(error.message);
        return;
      }
      if (error.status === 406 && !current.polling) {
        current.polling = true; // API Gateway cannot stream: long-poll instead.
        continue;
      }
      if (error.status === 404 || error.status === 403 || error.status === 400) {
        // The config is gone or the token may not watch it: retrying will not help.
        setLive(current, false, 'Not live');
        showFailure(error, ui.configError);
        return;
      }
      if (error.status === 410) {
        // History was compacted past where the watch would resume: start over.
        await reloadAfterCompaction(current);
        continue;
      }
      if (error.retryAfter) delay = Math.min(error.retryAfter * 1000, MAX_RETRY_AFTER_MS);
    }
    if (signal.aborted) return;
    setLive(current, false);
    await sleep(delay, signal);
  }
}

async function reloadAfterCompaction(current) {
  setLive(current, false);
  try {
    await loadKeys(current);
  } catch (error) {
    if (!isAbort(error)) await sleep(RECONNECT_DELAY_MS, current.controller.signal);
  }
}

/** Reads one Server-Sent Events stream until it ends. */
async function streamChanges(current) {
  const headers = { Accept: 'text/event-stream' };
  if (current.lastEventId !== null) headers['Last-Event-ID'] = current.lastEventId;
  const response = await api('GET', `${configUrl(current.name)}/watch`, {
    headers, signal: current.controller.signal, raw: true,
  });
  if (!response.body || !(response.headers.get('Content-Type') || '').includes('text/event-stream')) {
    throw new ApiError(406, 'notStreaming', 'The server does not stream changes.');
  }
  setLive(current, true);

  const parser = new EventStreamParser((message) => onStreamMessage(current, message));
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    parser.push(decoder.decode(value, { stream: true }));
  }
  parser.push(decoder.decode());
}

/**
 * The Server-Sent Events format, parsed by hand since EventSource cannot send an
 * Authorization header: lines of `field: value`, comment lines starting with ":",
 * a blank line ending each event. Calls `onMessage({ id, event, data })` per event.
 */
class EventStreamParser {
  constructor(onMessage) {
    this.onMessage = onMessage;
    this.buffer = '';
    this.reset();
  }

  reset() {
    this.id = null;
    this.event = '';
    this.data = [];
  }

  push(chunk) {
    let text = this.buffer + chunk;
    // A chunk ending in \r may be cut inside \r\n: keep the \r for the next chunk.
    let carry = '';
    if (text.endsWith('\r')) {
      text = text.slice(0, -1);
      carry = '\r';
    }
    const lines = text.split(/\r\n|\r|\n/);
    this.buffer = lines.pop() + carry;
    for (const line of lines) this.line(line);
  }

  line(line) {
    if (line === '') {
      this.dispatch();
      return;
    }
    if (line.startsWith(':')) return; // a heartbeat or comment
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') this.event = value;
    else if (field === 'data') this.data.push(value);
    else if (field === 'id' && !value.includes('\0')) this.id = value;
    // retry and unknown fields are ignored: the console reconnects on its own.
  }

  dispatch() {
    if (this.data.length || this.id !== null) {
      this.onMessage({ id: this.id, event: this.event || 'message', data: this.data.join('\n') });
    }
    this.reset();
  }
}

function onStreamMessage(current, { id, event, data }) {
  if (current !== session) return;
  // An `error` event (the reader fell behind) ends the stream; the watch reconnects
  // after its id and loses nothing.
  if (event !== 'error' && data) {
    try {
      applyChange(current, JSON.parse(data));
    } catch (error) {
      console.warn('discfg console: an event could not be read', error);
    }
  }
  if (id !== null) current.lastEventId = id;
}

/**
 * Long-polls for changes until an error: each answer holds the events after
 * fromRevision and the last revision it accounted for.
 */
async function pollChanges(current) {
  // After R the next revision is R + 1; after R.P (inside a transaction) read R again:
  // the events already applied are recognised as replays.
  const last = Number(current.lastEventId ?? current.revision);
  let from = Number.isInteger(last) ? last + 1 : Math.floor(last);
  // The first poll answers at once, so the status says "Live" as soon as polling works.
  let wait = 0;
  for (;;) {
    const envelope = await api('GET', `${configUrl(current.name)}/watch?fromRevision=${from}&timeout=${wait}`, {
      signal: current.controller.signal,
    });
    wait = LONG_POLL_SECONDS;
    if (current !== session) return;
    setLive(current, true);
    for (const event of envelope.events || []) applyChange(current, event);
    if (typeof envelope.revision === 'number') {
      current.lastEventId = String(envelope.revision);
      from = envelope.revision + 1;
    }
  }
}

/**
 * Applies one change ({ key, type, revision, item }) to the tree and the editor.
 * Changes already reflected (a replay after reconnecting, or the echo of this
 * console's own save) are recognised by their revisions and only move the revision.
 */
function applyChange(current, change) {
  if (!change || typeof change.key !== 'string') return;
  const { key, type } = change;
  const revision = Number(change.revision) || 0;
  const known = current.items.get(key);
  current.revision = Math.max(current.revision, revision);
  renderRevision();

  if (type === 'put' && change.item) {
    if (known && known.modRevision >= change.item.modRevision) return;
    current.items.set(key, change.item);
    current.changed.add(key);
  } else if (type === 'delete' || type === 'expire') {
    if (!known || known.modRevision > revision) return;
    current.items.delete(key);
    current.changed.delete(key);
  } else {
    return;
  }
  if (key.startsWith(SCHEMA_NAMESPACE)) scheduleSchemaLoad(current);
  scheduleTreeRender(current);
  editorSawChange({ key, type, revision, item: type === 'put' ? change.item : null });
}

/** Redraws the tree once after a burst of changes (a transaction's events). */
function scheduleTreeRender(current) {
  if (current.renderQueued) return;
  current.renderQueued = true;
  setTimeout(() => {
    current.renderQueued = false;
    if (current === session) renderTree();
  }, 0);
}

// ---------------------------------------------------------------------------
// The key tree
// ---------------------------------------------------------------------------

/** Folders by "/" segments: { path, folders: Map(name → folder), keys: [{ name, key }] }. */
function buildTree(keys) {
  const root = { path: '/', folders: new Map(), keys: [] };
  for (const key of keys) {
    const segments = key.slice(1).split('/');
    let node = root;
    for (const segment of segments.slice(0, -1)) {
      let child = node.folders.get(segment);
      if (!child) {
        child = { name: segment, path: `${node.path}${segment}/`, folders: new Map(), keys: [] };
        node.folders.set(segment, child);
      }
      node = child;
    }
    node.keys.push({ name: segments[segments.length - 1], key });
  }
  return root;
}

const byText = (a, b) => (a < b ? -1 : a > b ? 1 : 0);

/** Redraws the tree from the session's items and the filter, keeping focus in place. */
function renderTree() {
  if (!session) return;
  const filter = ui.keyFilter.value.trim().toLowerCase();
  const keys = [...session.items.keys()]
    .filter((key) => !filter || key.toLowerCase().includes(filter))
    .sort(byText);

  const focused = ui.keys.contains(document.activeElement) ? document.activeElement : null;
  const focusKey = focused && focused.dataset.key;
  const focusFolder = focused && focused.dataset.folder;

  ui.keys.replaceChildren();
  const total = session.items.size;
  ui.keyCount.textContent = filter ? `${keys.length} of ${total} keys match` : `${total} ${total === 1 ? 'key' : 'keys'}`;
  if (!keys.length) {
    ui.keys.append(el('p', { className: 'empty' }, total ? 'No key matches the filter.' : 'No keys yet. Use “New key” to add one.'));
  } else {
    let counter = 0;
    const nextId = () => `folder-${(counter += 1)}`;
    ui.keys.append(renderFolder(buildTree(keys), Boolean(filter), nextId));
  }

  // A redraw replaces the buttons: give focus back to the one that had it.
  let target = null;
  if (focusKey) target = ui.keys.querySelector(`button[data-key="${CSS.escape(focusKey)}"]`);
  else if (focusFolder) target = ui.keys.querySelector(`button[data-folder="${CSS.escape(focusFolder)}"]`);
  if (target) target.focus();
}

/** A folder's contents as a list: its folders (toggle button + nested list), then its keys. */
function renderFolder(node, filtering, nextId) {
  const list = el('ul');
  const closed = filtering ? session.filterCollapsed : session.collapsed;
  for (const folder of [...node.folders.values()].sort((a, b) => byText(a.name, b.name))) {
    const open = !closed.has(folder.path);
    const id = nextId();
    const toggle = el('button', {
      type: 'button', className: 'folder', 'data-folder': folder.path,
      'aria-expanded': String(open), 'aria-controls': id, title: folder.path,
    }, `${folder.name}/`);
    const children = renderFolder(folder, filtering, nextId);
    children.id = id;
    children.hidden = !open;
    list.append(el('li', {}, toggle, children));
  }
  for (const leaf of [...node.keys].sort((a, b) => byText(a.name, b.name))) {
    list.append(el('li', {}, keyButton(leaf)));
  }
  return list;
}

function keyButton({ name, key }) {
  const changed = session.changed.has(key);
  const button = el('button', {
    type: 'button', className: changed ? 'key changed' : 'key', 'data-key': key, title: key,
    'aria-current': editor && !editor.isNew && editor.key === key ? 'true' : null,
  }, name);
  if (changed) {
    button.append(
      el('span', { className: 'marker', 'aria-hidden': 'true' }, '●'),
      el('span', { className: 'sr-only' }, ' (changed)'),
    );
  }
  return button;
}

function onTreeClick(event) {
  const folder = event.target.closest('button[data-folder]');
  if (folder) {
    toggleFolder(folder);
    return;
  }
  const key = event.target.closest('button[data-key]');
  if (key) requestKey(key.dataset.key);
}

/** Opens or closes a folder in place, remembering it for later redraws. */
function toggleFolder(button) {
  const open = button.getAttribute('aria-expanded') !== 'true';
  const closed = ui.keyFilter.value.trim() ? session.filterCollapsed : session.collapsed;
  if (open) closed.delete(button.dataset.folder);
  else closed.add(button.dataset.folder);
  button.setAttribute('aria-expanded', String(open));
  const group = document.getElementById(button.getAttribute('aria-controls'));
  if (group) group.hidden = !open;
}

function onFilterInput() {
  if (!session) return;
  session.filterCollapsed.clear(); // a new filter shows every match
  renderTree();
}

/** Marks the key open in the editor in the tree. */
function markCurrentInTree() {
  for (const button of ui.keys.querySelectorAll('button[data-key]')) {
    const current = editor && !editor.isNew && editor.key === button.dataset.key;
    if (current) button.setAttribute('aria-current', 'true');
    else button.removeAttribute('aria-current');
  }
}

// ---------------------------------------------------------------------------
// The editor
// ---------------------------------------------------------------------------

/** What was asked for last while the editor had unsaved changes (asking again discards them). */
let discardTarget = null;

/**
 * Whether the editor may be replaced by `target` (a key, or "new key"): yes when it
 * has no unsaved edits or the same thing is asked for twice in a row; otherwise it
 * says so, and the edits stay.
 */
function mayDiscardEdits(target, again) {
  if (!editor || !isDirty() || discardTarget === target) {
    discardTarget = null;
    return true;
  }
  discardTarget = target;
  ui.editorMessage.textContent = `You have unsaved changes. Save them, or ${again} to discard them.`;
  return false;
}

/** Opens a key from the tree, asking first when that would drop unsaved edits. */
function requestKey(key) {
  if (editor && !editor.isNew && editor.key === key && isDirty()) {
    ui.value.focus(); // already open, with edits: keep them
    return;
  }
  if (mayDiscardEdits(key, `select ${key} again`)) openKey(key);
}

async function openKey(key) {
  const current = session;
  const ticket = (openTicket += 1);
  ui.configError.textContent = '';
  try {
    const envelope = await api('GET', keyUrl(current.name, key), { signal: current.controller.signal });
    if (ticket !== openTicket || current !== session) return;
    current.changed.delete(key);
    loadEditor({ key, isNew: false, item: envelope.item });
    scheduleTreeRender(current);
    if (window.matchMedia('(max-width: 56rem)').matches) ui.editor.scrollIntoView({ block: 'start' });
  } catch (error) {
    if (isAbort(error) || ticket !== openTicket || current !== session) return;
    if (error.status === 404 && current.items.delete(key)) scheduleTreeRender(current);
    showFailure(error, editor ? ui.editorMessage : ui.configError);
  }
}

/** Starts a new key, its path prefilled with the folder of the key open now. */
function newKey() {
  if (!session || !mayDiscardEdits('new key', 'press “New key” again')) return;
  const folder = editor && !editor.isNew ? editor.key.slice(0, editor.key.lastIndexOf('/') + 1) : '/';
  loadEditor({ key: folder, isNew: true, item: null });
  ui.keyPath.focus();
  ui.keyPath.setSelectionRange(folder.length, folder.length);
}

/** Puts a key (or a new one) in the editor, dropping notices, conflicts and messages. */
function loadEditor({ key, isNew, item }) {
  const secret = isSecret(item);
  const binary = !secret && isBinary(item);
  // Binary values and secrets are shown, not edited: a textarea cannot hold bytes, and
  // a secret can only be sealed where its config's key is.
  const readOnly = binary || secret;
  const originalContentType = (item && item.contentType) || 'text/plain';
  editor = {
    key,
    isNew,
    item,
    baseRevision: item ? item.modRevision : null,
    originalValue: item && !readOnly ? item.value : '',
    originalContentType,
    originalJson: item && !readOnly && isJsonType(originalContentType) ? jsonObject(item.value) : null,
    readOnly,
    busy: false,
    pending: null,
    latest: null,
    schemaShown: null,
  };
  conflict = null;
  discardTarget = null;

  ui.editorEmpty.hidden = true;
  ui.editor.hidden = false;
  ui.editorHeading.textContent = isNew ? 'New key' : 'Key';
  ui.keyPath.value = key;
  ui.keyPath.readOnly = !isNew;
  ui.keyPathHint.hidden = !isNew;

  renderMeta(item);
  ui.binaryNote.hidden = !binary;
  ui.binaryNote.textContent = binary
    ? `binary value, ${base64Length(item.value)} bytes (it cannot be edited here)`
    : '';
  ui.valueField.hidden = readOnly;
  ui.value.value = editor.originalValue;
  ui.contentType.value = editor.originalContentType;
  ui.mergeField.hidden = !editor.originalJson;
  ui.mergePatch.checked = true;
  ui.ttlNote.textContent = editor.originalJson
    ? 'This key has a TTL: saving only the members you changed keeps it; saving the whole value stores it without one, so it no longer expires.'
    : 'This key has a TTL: saving it here stores the value without one, so it no longer expires.';
  showViolations([]);
  hideSchema();
  renderSchemaInfo();
  ui.save.hidden = readOnly;
  ui.historyToggle.hidden = isNew;
  renderSecret(secret ? item : null);
  // An open history follows the editor from key to key, and shows each new change.
  if (timeline && isNew) closeHistory();
  else if (timeline) openHistory(key);
  ui.deleteKey.hidden = isNew;

  ui.changedNotice.hidden = true;
  ui.deleteConfirm.hidden = true;
  ui.editorMessage.textContent = '';
  renderConflict(); // also enables the buttons
  onEditorInput();
  markCurrentInTree();
}

function closeEditor() {
  editor = null;
  conflict = null;
  showViolations([]);
  ui.schemaView.hidden = true;
  closeHistory();
  renderSecret(null);
  ui.editor.hidden = true;
  ui.editorEmpty.hidden = false;
  ui.conflict.hidden = true;
  markCurrentInTree();
}

/** Fills the metadata list; hidden for a new key. */
function renderMeta(item) {
  ui.meta.hidden = !item;
  const field = (name) => ui.meta.querySelector(`[data-field="${name}"]`);
  for (const name of ['version', 'createRevision', 'modRevision', 'contentType']) {
    field(name).textContent = item ? String(item[name] ?? (name === 'contentType' ? 'text/plain' : '')) : '';
  }
  field('modified').replaceChildren(item && item.modified ? ageElement(item.modified) : '');
  const expires = expiryOf(item);
  ui.metaExpiry.hidden = !expires;
  ui.ttlNote.hidden = !expires;
  field('expires').replaceChildren(expires ? ageElement(expires) : '');
}

/** Whether the value or content type differ from what was loaded. */
function isDirty() {
  if (!editor || editor.readOnly) return false;
  return ui.value.value !== editor.originalValue || ui.contentType.value !== editor.originalContentType;
}

/** After each edit: the unsaved marker and whether "Format JSON" applies. */
function onEditorInput() {
  if (!editor) return;
  ui.dirty.hidden = !isDirty();
  ui.formatJson.hidden = editor.readOnly
    || !(isJsonType(ui.contentType.value) || looksLikeJsonContainer(ui.value.value));
}

function onFormatJson() {
  const problem = jsonError(ui.value.value);
  if (problem) {
    ui.editorMessage.textContent = `Cannot format: the value is not valid JSON (${problem}).`;
    return;
  }
  ui.editorMessage.textContent = '';
  ui.value.value = prettyJson(ui.value.value);
  onEditorInput();
}

/** Why a new key's path is not acceptable, or null. */
function keyPathProblem(key) {
  if (!key.startsWith('/')) return 'A key path starts with “/”, such as /db/host.';
  if (key === '/' || key.endsWith('/')) return 'A key path names a key, so it cannot end with “/”.';
  const segments = key.slice(1).split('/');
  if (segments.some((segment) => segment === '')) return 'A key path cannot contain “//”.';
  if (segments.some((segment) => segment === '.' || segment === '..')) return 'A key path cannot contain “.” or “..” segments.';
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f-\u009f]/.test(key)) return 'A key path cannot contain control characters.';
  if (new TextEncoder().encode(key).length > 1024) return 'A key path is at most 1024 bytes.';
  return null;
}

/** Save: checks the value, then writes with If-Match (If-None-Match for a new key). */
async function onSave(event) {
  event.preventDefault();
  if (!editor || editor.readOnly || editor.busy || conflict) return;
  ui.editorMessage.textContent = '';
  const key = editor.isNew ? ui.keyPath.value.trim() : editor.key;
  if (editor.isNew) {
    const problem = keyPathProblem(key) || (session.items.has(key) ? `${key} already exists: open it from the tree to edit it.` : null);
    if (problem) {
      ui.editorMessage.textContent = problem;
      ui.keyPath.focus();
      return;
    }
  }
  const value = ui.value.value;
  const contentType = ui.contentType.value.trim() || 'text/plain';
  if (isJsonType(contentType)) {
    const problem = jsonError(value);
    if (problem) {
      ui.editorMessage.textContent = `Not saved: the value is not valid JSON (${problem}).`;
      ui.value.focus();
      return;
    }
  }
  const condition = editor.isNew ? { 'If-None-Match': '*' } : { 'If-Match': etag(editor.baseRevision) };
  await writeKey(key, value, contentType, condition, plannedPatch(value, contentType));
}

/**
 * The merge patch a save sends, or null for a whole PUT: only for a JSON object whose
 * content type stays, with "only the members I changed" checked, and an edit a merge
 * patch can say (objects stay objects, no member set to null, more than layout changed).
 */
function plannedPatch(value, contentType) {
  if (!editor.originalJson || !ui.mergePatch.checked || contentType !== editor.originalContentType.trim()) return null;
  const edited = parseJson(value);
  const document = mergePatch(editor.originalJson, edited);
  if (!document || document.size === 0) return null;
  return { document, original: editor.originalJson, edited };
}

/**
 * Whether a merge patch refused (412) because the key changed can be sent again over
 * the current item: it is still a JSON object of the same content type, and the change
 * made meanwhile touched other members than the edit.
 */
function patchStillApplies(patch, contentType, item) {
  if (!item || isBinary(item) || (item.contentType || 'text/plain') !== contentType) return false;
  const now = jsonObject(item.value);
  return Boolean(now) && editsApart(patch.original, patch.edited, now);
}

/**
 * Writes the editor's value under `condition`: a PUT of the whole value, or, given a
 * `patch`, a PATCH with the merge patch. A merge patch refused because someone changed
 * other members meanwhile is sent again with If-Match of their revision, so both
 * changes stay. Resolves to { envelope, mergedOver } or, when the change made
 * meanwhile collides with the edit, { conflictWith: the current item or null }.
 */
async function sendWrite(current, key, value, contentType, condition, patch) {
  const { signal } = current.controller;
  if (!patch) {
    const body = value;
    return { envelope: await api('PUT', keyUrl(current.name, key), { body, headers: { 'Content-Type': contentType, ...condition }, signal }) };
  }
  const body = writeJson(patch.document);
  let ifMatch = condition;
  let mergedOver = null;
  for (let attempt = 1; ; attempt += 1) {
    try {
      const envelope = await api('PATCH', keyUrl(current.name, key), { body, headers: { 'Content-Type': MERGE_PATCH_TYPE, ...ifMatch }, signal });
      return { envelope, mergedOver };
    } catch (error) {
      if (error.status === 404) return { conflictWith: null }; // deleted meanwhile
      if (error.status !== 412 || attempt === MERGE_ATTEMPTS) throw error;
    }
    let now = null;
    try {
      now = (await api('GET', keyUrl(current.name, key), { signal })).item;
    } catch (error) {
      if (error.status !== 404) throw error;
    }
    if (!patchStillApplies(patch, contentType, now)) return { conflictWith: now };
    ifMatch = { 'If-Match': etag(now.modRevision) };
    mergedOver = now.modRevision;
  }
}

/** Saves a value under a condition; a 412 opens the conflict view, a 422 the schema's violations. */
async function writeKey(key, value, contentType, condition, patch = null) {
  const current = session;
  const editing = editor;
  setEditorBusy(editing, true);
  showViolations([]);
  try {
    const sent = await sendWrite(current, key, value, contentType, condition, patch);
    if (current !== session) return;
    if (sent.conflictWith !== undefined) await showConflict(current, editing, key, value, contentType, sent.conflictWith);
    else saved(current, editing, key, sent.envelope, patch ? { mergedOver: sent.mergedOver } : null);
  } catch (error) {
    if (isAbort(error) || current !== session) return;
    if (error.status === 412) await showConflict(current, editing, key, value, contentType);
    else if (error.code === 'schemaViolation' && error.violations.length && editor === editing) showViolations(error.violations);
    else showFailure(error, ui.editorMessage);
  } finally {
    setEditorBusy(editing, false);
  }
  // A live change that arrived during the save: judge it against the new revision.
  if (editing.pending && editor) editorSawChange(editing.pending);
}

/**
 * A save answered: the tree and the editor take the saved item. `merged` is set for a
 * merge patch: { mergedOver }, the revision of someone else's change it was merged with.
 */
function saved(current, editing, key, envelope, merged) {
  const { item } = envelope;
  current.items.set(key, item);
  current.changed.delete(key);
  current.revision = Math.max(current.revision, envelope.revision ?? item.modRevision);
  renderRevision();
  scheduleTreeRender(current);
  if (editor === editing) {
    loadEditor({ key, isNew: false, item });
    ui.save.focus();
  }
  const how = !merged ? '' : merged.mergedOver
    ? ` (the members you changed, merged with the change of revision ${merged.mergedOver})`
    : ' (the members you changed)';
  flash(`Saved ${key}${how} at revision ${envelope.revision ?? item.modRevision}`);
}

/** Lists the schema violations of a refused save beside the value (none: hides the list). */
function showViolations(violations) {
  ui.violations.hidden = violations.length === 0;
  ui.violationList.replaceChildren(...violations.map((violation) => {
    const text = (field) => (typeof violation[field] === 'string' ? violation[field] : '');
    const pointer = text('pointer');
    // As the CLI prints it: KEY: POINTER: message (keyword), no pointer for the whole value.
    return el('li', {},
      el('code', {}, text('key')), ': ',
      ...(pointer ? [el('code', {}, pointer), ': '] : []),
      text('message'), ' ', el('span', { className: 'hint' }, `(${text('keyword')})`));
  }));
  if (violations.length) ui.value.focus();
}

// ---- Schemas ----

/** Which schemas check the key in the editor, each with a button to read it. */
function renderSchemaInfo() {
  if (!editor || editor.isNew || !session) return;
  if (session.schemas === null) {
    ui.schemaInfo.replaceChildren(session.schemasError ? `unknown (${session.schemasError})` : 'reading…');
    return;
  }
  const schemas = schemasFor(session.schemas, editor.key);
  ui.schemaInfo.replaceChildren(...(schemas.length ? schemas.flatMap((schema) => [
    el('span', { className: 'schema-name' }, schema.prefix ? `${schema.target} (the keys under it)` : `${schema.target} (this key)`),
    el('button', { type: 'button', 'data-schema': schema.target, 'aria-controls': 'schema-view' }, 'View'),
  ]) : ['none']));
  // The schema being read: read again (it may have changed), or closed if it no longer applies.
  if (editor.schemaShown && schemas.some((schema) => schema.target === editor.schemaShown)) showSchema(editor.schemaShown, false);
  else hideSchema();
}

function onSchemaClick(event) {
  const button = event.target.closest('button[data-schema]');
  if (!button || !editor) return;
  if (editor.schemaShown === button.dataset.schema && !ui.schemaView.hidden) hideSchema();
  else showSchema(button.dataset.schema, true);
}

function hideSchema() {
  if (editor) editor.schemaShown = null;
  ui.schemaView.hidden = true;
}

/** Reads the schema of `target` (GET schema?target=) and shows it as text, indented when it is JSON. */
async function showSchema(target, focus) {
  const current = session;
  const editing = editor;
  editing.schemaShown = target;
  let text;
  try {
    const response = await api('GET', `${configUrl(current.name)}/schema?target=${encodeURIComponent(target)}`, {
      signal: current.controller.signal, raw: true,
    });
    text = await response.text();
  } catch (error) {
    if (isAbort(error) || current !== session || editor !== editing) return;
    if (error.status === 401) {
      showFailure(error, ui.editorMessage);
      return;
    }
    text = `The schema could not be read: ${error.message}`;
  }
  if (current !== session || editor !== editing || editing.schemaShown !== target) return;
  ui.schemaViewHeading.textContent = `Schema of ${target}`;
  ui.schemaText.textContent = jsonError(text) === null ? prettyJson(text) : text;
  ui.schemaView.hidden = false;
  if (focus) ui.schemaViewHeading.focus();
}

function setEditorBusy(editing, busy) {
  editing.busy = busy;
  if (editor === editing) syncEditorButtons();
}

/** Enables the editor's buttons unless a request is under way (Save also not during a conflict). */
function syncEditorButtons() {
  const busy = Boolean(editor && editor.busy);
  ui.save.disabled = busy || Boolean(conflict);
  ui.deleteKey.disabled = busy;
  ui.deleteConfirmYes.disabled = busy;
  ui.conflictReapply.disabled = busy;
  ui.conflictDiscard.disabled = busy;
}

// ---- Delete a key ----

function onDeleteKey() {
  if (!editor || editor.isNew) return;
  ui.deleteConfirmText.textContent = `Delete ${editor.key}? Its history stays, but the key is gone.`;
  ui.deleteConfirm.hidden = false;
  ui.deleteConfirmNo.focus();
}

function onDeleteCancel() {
  ui.deleteConfirm.hidden = true;
  ui.deleteKey.focus();
}

async function onDeleteConfirmed() {
  if (!editor || editor.isNew || editor.busy) return;
  const current = session;
  const editing = editor;
  const { key } = editing;
  ui.editorMessage.textContent = '';
  setEditorBusy(editing, true);
  try {
    const envelope = await api('DELETE', keyUrl(current.name, key), {
      headers: { 'If-Match': etag(editing.baseRevision) },
      signal: current.controller.signal,
    });
    if (current !== session) return;
    forgetKey(current, key, envelope.revision);
    if (editor === editing) closeEditor();
    flash(`Deleted ${key}${envelope.revision ? ` at revision ${envelope.revision}` : ''}`);
    ui.newKey.focus();
  } catch (error) {
    if (isAbort(error) || current !== session) return;
    if (error.status === 404) {
      forgetKey(current, key);
      if (editor === editing) closeEditor();
      flash(`${key} was already deleted`);
    } else if (error.status === 412) {
      await refuseStaleDelete(current, editing);
    } else {
      showFailure(error, ui.editorMessage);
    }
  } finally {
    setEditorBusy(editing, false);
  }
}

function forgetKey(current, key, revision) {
  current.items.delete(key);
  current.changed.delete(key);
  if (revision) current.revision = Math.max(current.revision, revision);
  renderRevision();
  scheduleTreeRender(current);
}

/** A delete refused because the key changed: show what it is now before trying again. */
async function refuseStaleDelete(current, editing) {
  let item = null;
  try {
    item = (await api('GET', keyUrl(current.name, editing.key), { signal: current.controller.signal })).item;
  } catch (error) {
    if (error.status !== 404) {
      showFailure(error, ui.editorMessage);
      return;
    }
  }
  if (current !== session || editor !== editing) return;
  if (!item) {
    forgetKey(current, editing.key);
    closeEditor();
    flash(`${editing.key} was already deleted`);
    return;
  }
  if (!isDirty()) loadEditor({ key: editing.key, isNew: false, item });
  else showChangedNotice({ key: item.key, type: 'put', revision: item.modRevision, item });
  ui.editorMessage.textContent = `Not deleted: ${editing.key} changed (revision ${item.modRevision}) since you opened it. Review it, then delete again.`;
}

// ---- Changes underneath the editor ----

/**
 * A live change to some key: if it is the key in the editor, refresh the editor when
 * it has no unsaved edits, or else say that the key changed.
 */
function editorSawChange(change) {
  if (!editor) return;
  const openKeyPath = editor.isNew ? ui.keyPath.value.trim() : editor.key;
  if (change.key !== openKeyPath) return;
  if (editor.busy) {
    editor.pending = change; // judged when the save or delete answers
    return;
  }
  if (editor.isNew) {
    if (change.type === 'put') showChangedNotice(change);
    return;
  }
  if (change.type === 'put' && change.item.modRevision <= editor.baseRevision) return; // seen already
  if (conflict) {
    // The conflict view compares against the current value: keep it current (a
    // change older than the value shown, held back during the save, is dropped).
    const shown = conflict.current ? conflict.current.modRevision : 0;
    if (change.revision > shown) {
      conflict.current = change.item;
      renderConflict();
    }
    return;
  }
  if (!isDirty()) {
    if (change.type === 'put') {
      loadEditor({ key: change.key, isNew: false, item: change.item });
      flash(`${change.key} was updated to revision ${change.item.modRevision}`);
    } else {
      closeEditor();
      flash(`${change.key} was ${change.type === 'expire' ? 'expired' : 'deleted'} at revision ${change.revision}`);
    }
    return;
  }
  showChangedNotice(change);
}

function showChangedNotice(change) {
  editor.latest = change;
  if (change.type === 'put') {
    const merges = editor.originalJson && ui.mergePatch.checked;
    ui.changedNoticeText.textContent = `This key changed (revision ${change.revision}) while you were editing.${
      merges ? ' Saving keeps that change where it touched other members than yours.' : ''}`;
    ui.changedLoad.textContent = 'Load the current value';
  } else {
    const what = change.type === 'expire' ? 'expired' : 'was deleted';
    ui.changedNoticeText.textContent = `This key ${what} (revision ${change.revision}) while you were editing.`;
    ui.changedLoad.textContent = 'Close it';
  }
  ui.changedNotice.hidden = false;
}

/** After the tree was reloaded: notice if the open key changed meanwhile. */
function syncEditorWithTree() {
  if (!editor || editor.isNew || !session) return;
  const item = session.items.get(editor.key);
  if (!item) {
    editorSawChange({ key: editor.key, type: 'delete', revision: session.revision, item: null });
  } else if (item.modRevision > editor.baseRevision) {
    editorSawChange({ key: editor.key, type: 'put', revision: item.modRevision, item });
  }
}

/** "Load the current value": drops the edits for what the server has now. */
function onLoadCurrent() {
  if (!editor || !editor.latest) return;
  const change = editor.latest;
  if (change.type === 'put') {
    loadEditor({ key: change.key, isNew: false, item: change.item });
    ui.value.focus();
  } else {
    closeEditor();
    ui.newKey.focus();
  }
}

// ---- Conflicts ----

/**
 * A save was refused (412): fetch the current value (unless `known`, the item read
 * already, or null for a deleted key) and show both side by side.
 */
async function showConflict(current, editing, key, value, contentType, known) {
  let item = known ?? null;
  if (known === undefined) {
    try {
      item = (await api('GET', keyUrl(current.name, key), { signal: current.controller.signal })).item;
    } catch (error) {
      if (isAbort(error)) return;
      if (error.status !== 404) {
        showFailure(error, ui.editorMessage);
        return;
      }
    }
  }
  if (current !== session || editor !== editing) return;
  conflict = { key, value, contentType, current: item };
  ui.changedNotice.hidden = true;
  renderConflict();
  ui.conflictHeading.focus();
}

function renderConflict() {
  ui.conflict.hidden = !conflict;
  syncEditorButtons();
  if (!conflict) return;
  ui.conflictMine.textContent = conflict.value;
  const theirs = conflict.current;
  if (theirs) {
    ui.conflictTheirsHeading.textContent = `Current value (revision ${theirs.modRevision}, by someone else)`;
    ui.conflictTheirs.textContent = displayValue(theirs);
  } else {
    ui.conflictTheirsHeading.textContent = 'Current value (deleted by someone else)';
    ui.conflictTheirs.textContent = '';
  }
}

/** "Re-apply mine": saves your value over the current revision, knowingly. */
async function onConflictReapply() {
  if (!conflict || !editor || editor.busy) return;
  const { key, value, contentType, current } = conflict;
  const condition = current ? { 'If-Match': etag(current.modRevision) } : { 'If-None-Match': '*' };
  conflict = null;
  renderConflict();
  await writeKey(key, value, contentType, condition);
}

/** "Discard mine": loads the current value into the editor. */
function onConflictDiscard() {
  if (!conflict) return;
  const { key, current } = conflict;
  if (current) {
    loadEditor({ key, isNew: false, item: current });
    flash(`Loaded the current value of ${key} (revision ${current.modRevision})`);
    ui.value.focus();
  } else {
    closeEditor();
    flash(`${key} is deleted; your value was discarded`);
    ui.newKey.focus();
  }
}

// ---------------------------------------------------------------------------
// Delete a config
// ---------------------------------------------------------------------------

// ---- Panels a button opens and closes (aria-expanded kept in step) ----

/** Opens `panel` below `button` and calls `opened`; or, when it is open, closes it. */
function togglePanel(button, panel, opened, hide) {
  if (!panel.hidden) {
    hide();
    button.focus();
    return;
  }
  setPanel(button, panel, true);
  opened();
}

function setPanel(button, panel, open) {
  panel.hidden = !open;
  button.setAttribute('aria-expanded', String(open));
}

function onDeleteConfigToggle() {
  togglePanel(ui.deleteConfig, ui.deleteConfigForm, () => {
    ui.deleteConfigLabel.textContent = `Type “${session.name}” to delete this config, its keys and its history`;
    ui.deleteConfigConfirm.value = '';
    ui.deleteConfigError.textContent = '';
    ui.deleteConfigConfirm.focus();
  }, hideDeleteConfig);
}

function hideDeleteConfig() {
  setPanel(ui.deleteConfig, ui.deleteConfigForm, false);
}

async function onDeleteConfig(event) {
  event.preventDefault();
  if (!session) return;
  const { name } = session;
  if (ui.deleteConfigConfirm.value.trim() !== name) {
    ui.deleteConfigError.textContent = `Type the config's name, ${name}, exactly to delete it.`;
    ui.deleteConfigConfirm.focus();
    return;
  }
  ui.deleteConfigSubmit.disabled = true;
  try {
    await api('DELETE', configUrl(name), { signal: session.controller.signal });
    flash(`Deleted config ${name}`);
    navigate(null);
  } catch (error) {
    showFailure(error, ui.deleteConfigError);
  } finally {
    ui.deleteConfigSubmit.disabled = false;
  }
}

/** What a PUT sends for an item's value: its bytes when it is binary, else its text. */
const bodyOf = (item) => (isBinary(item) ? base64Bytes(item.value) : item.value);

// ---------------------------------------------------------------------------
// Secrets
// ---------------------------------------------------------------------------
//
// A secret is sealed in the client (AES-256-GCM under one of its config's data keys,
// which are kept wrapped by the config's key). The server never holds a key, so the
// console shows secrets masked. Where the config's key is a key file, the user may
// give the file to this tab: the browser opens the data key and the value itself with
// Web Crypto, keeps the key in memory for this config only, and sends nothing.

/** The config's encryption settings (read once per open config, or again when `fresh`), or null. */
async function encryptionOf(current, fresh = false) {
  if (current.encryption === undefined || fresh) {
    const envelope = await api('GET', configUrl(current.name), { signal: current.controller.signal });
    current.encryption = (envelope.info && envelope.info.settings && envelope.info.settings.encryption) || null;
  }
  return current.encryption;
}

const isFileKeyName = (name) => typeof name === 'string' && name.startsWith('file://');

/** One of the config's data keys, opened with the key file given to this tab. */
async function dataKey(current, id) {
  if (current.dataKeys.has(id)) return current.dataKeys.get(id);
  const find = (encryption) => encryption && (encryption.dataKeys || []).find((candidate) => candidate.id === id);
  // A data key made since the settings were read (discfg key rotate): read them again.
  const entry = find(await encryptionOf(current)) || find(await encryptionOf(current, true));
  if (!entry) throw new Error(`data key “${id}” is not one of this config's data keys`);
  const key = await unwrapDataKey(current.fileKey, current.name, id, entry.wrapped);
  current.dataKeys.set(id, key);
  return key;
}

/** Opens a secret item of the open config: its value as text, and its own content type. */
const openSecret = (current, item) => openSealed(
  current.name, item, (id) => dataKey(current, id),
  // Read fresh: a config upgraded by key rotate --reseal since it was opened refuses them.
  async () => acceptsLegacySeals(await encryptionOf(current, true)),
);

/** Shows the secret panel for a secret item (or hides it for null). */
async function renderSecret(item) {
  ui.secret.hidden = !item;
  ui.secretValue.hidden = true;
  ui.secretValue.textContent = '';
  ui.secretHide.hidden = true;
  ui.secretReveal.hidden = true;
  ui.secretKeyField.hidden = true;
  ui.secretError.textContent = '';
  if (!item) return;
  const current = session;
  ui.secretNote.textContent = 'Sealed in the client with this config\'s key. The server keeps only ciphertext, so the console shows it masked. It cannot be edited here: set it with discfg set --secret.';
  let encryption = null;
  try {
    encryption = await encryptionOf(current);
  } catch (error) {
    if (current === session) showFailure(error, ui.secretError);
    return;
  }
  if (current !== session || !editor || editor.item !== item) return;
  const name = encryption && encryption.key;
  if (!window.crypto || !window.crypto.subtle) {
    ui.secretNote.textContent += ' Revealing it needs a secure page (https or localhost).';
  } else if (isFileKeyName(name)) {
    ui.secretKeyField.hidden = Boolean(current.fileKey);
    ui.secretReveal.hidden = !current.fileKey;
    if (!current.fileKey) ui.secretNote.textContent += ` Its key is the key file ${name.slice('file://'.length)}: choose that file to reveal the value in this tab.`;
  } else {
    const what = name ? `Its key is ${name}, which a browser cannot use` : 'This config names no key';
    ui.secretNote.textContent += ` ${what}: reveal it with discfg get ${current.name} ${item.key}.`;
  }
}

/** A key file was chosen: read it, keep it for this config, and reveal the value. */
async function onSecretKeyChosen() {
  const file = ui.secretKey.files[0];
  const current = session;
  ui.secretKey.value = '';
  if (!file || !current) return;
  ui.secretError.textContent = '';
  const key = file.size < 1024 ? await importKeyFile(await file.text()) : null;
  if (current !== session) return;
  if (!key) {
    ui.secretError.textContent = `${file.name} is not a discfg key file (made by discfg key init).`;
    return;
  }
  current.fileKey = key;
  current.dataKeys = new Map();
  await revealSecret();
}

async function revealSecret() {
  if (!editor || !isSecret(editor.item) || !session || !session.fileKey) return;
  const current = session;
  const { item } = editor;
  ui.secretError.textContent = '';
  try {
    const opened = await openSecret(current, item);
    if (current !== session || !editor || editor.item !== item) return;
    ui.secretValue.textContent = opened.text;
    ui.secretValue.hidden = false;
    ui.secretHide.hidden = false;
    ui.secretReveal.hidden = true;
    ui.secretKeyField.hidden = true;
    ui.secretHide.focus();
  } catch (error) {
    if (isAbort(error) || current !== session) return;
    if (error instanceof ApiError) showFailure(error, ui.secretError);
    else ui.secretError.textContent = `Not revealed: ${error.message}.`;
    // A key file that opens nothing is not kept.
    if (!(error instanceof ApiError) && current.dataKeys.size === 0) {
      current.fileKey = null;
      ui.secretKeyField.hidden = false;
      ui.secretReveal.hidden = true;
    }
  }
}

function hideSecret() {
  ui.secretValue.textContent = '';
  ui.secretValue.hidden = true;
  ui.secretHide.hidden = true;
  ui.secretReveal.hidden = !(session && session.fileKey);
  ui.secretReveal.focus();
}

// ---------------------------------------------------------------------------
// A key's history: timeline, diff, restore
// ---------------------------------------------------------------------------

const HISTORY_PAGE = 50;

/**
 * The history shown for the key in the editor, or null:
 * { key, events (newest first), cursor, a, b (revisions compared), ticket }.
 */
let timeline = null;

function onHistoryToggle() {
  if (timeline) {
    closeHistory();
    ui.historyToggle.focus();
    return;
  }
  if (!editor || editor.isNew) return;
  openHistory(editor.key).then(() => { if (timeline) ui.historyHeading.focus(); });
}

/** Shows the history of `key`: read again when it is already shown (a new change). */
function openHistory(key) {
  if (!timeline || timeline.key !== key) {
    timeline = { key, events: [], cursor: null, a: null, b: null, ticket: 0 };
    ui.historyList.replaceChildren(el('li', { className: 'empty' }, 'Loading history…'));
    ui.diff.hidden = true;
  }
  ui.history.hidden = false;
  ui.historyToggle.setAttribute('aria-expanded', 'true');
  return loadHistory(true);
}

function closeHistory() {
  timeline = null;
  ui.history.hidden = true;
  ui.historyToggle.setAttribute('aria-expanded', 'false');
  ui.historyList.replaceChildren();
  ui.diff.hidden = true;
  ui.historyError.textContent = '';
}

/** Reads the newest page of history (`fresh`) or the next older one. */
async function loadHistory(fresh) {
  const current = session;
  const shown = timeline;
  if (!current || !shown) return;
  const ticket = (shown.ticket += 1);
  const before = !fresh && shown.cursor ? `&before=${encodeURIComponent(shown.cursor)}` : '';
  const path = historyUrl(current.name, shown.key);
  try {
    const envelope = await api('GET', `${path}?limit=${HISTORY_PAGE}${before}`, { signal: current.controller.signal });
    if (current !== session || shown !== timeline || ticket !== shown.ticket) return;
    const events = envelope.events || [];
    shown.events = fresh ? events : shown.events.concat(events);
    shown.cursor = envelope.cursor || null;
    shown.compacted = envelope.compactedRevision || 0;
    const known = new Set(shown.events.map((event) => event.revision));
    if (fresh || !known.has(shown.a) || !known.has(shown.b)) chooseDefaultPair(shown);
    ui.historyError.textContent = '';
    renderHistory();
  } catch (error) {
    if (isAbort(error) || current !== session || shown !== timeline) return;
    showFailure(error, ui.historyError);
  }
}

/** By default B is the newest value and A the one before it. */
function chooseDefaultPair(shown) {
  shown.b = shown.events.length ? shown.events[0].revision : null;
  shown.a = shown.events.length > 1 ? shown.events[1].revision : shown.b;
}

const changeWords = { put: 'set', delete: 'deleted', expire: 'expired' };

function renderHistory() {
  const shown = timeline;
  if (!shown) return;
  const currentItem = session && session.items.get(shown.key);
  const list = [];
  for (const event of shown.events) {
    const { revision } = event;
    const isCurrent = Boolean(currentItem && event.item && event.item.modRevision === currentItem.modRevision);
    const removed = event.type !== 'put';
    const line = el('div', { className: 'history-line' },
      el('strong', {}, `Revision ${revision}`), ' ',
      el('span', {}, changeWords[event.type] || event.type), ' ',
      event.item ? el('span', { className: 'hint' }, `version ${event.item.version}`) : '', ' ',
      event.at ? ageElement(event.at) : '', ' ',
      isCurrent ? el('span', { className: 'badge' }, 'current') : '');
    const value = removed
      ? el('p', { className: 'hint' }, event.type === 'expire' ? 'The key expired (its TTL ran out).' : 'The key was deleted.')
      : el('pre', { className: 'value-text' }, displayValue(event.item));
    const pick = (side, label) => el('label', {},
      el('input', {
        type: 'radio', name: `diff-${side}`, value: String(revision), 'data-side': side,
        checked: shown[side] === revision, 'aria-label': `${label} revision ${revision}`,
      }), side.toUpperCase());
    const actions = el('div', { className: 'actions' }, pick('a', 'Compare from'), pick('b', 'Compare to'));
    if (!removed && !isCurrent) {
      actions.append(el('button', { type: 'button', 'data-restore': String(revision) }, 'Restore'));
    }
    actions.append(el('button', { type: 'button', className: 'quiet', 'data-at-revision': String(revision) }, 'Config at this revision'));
    list.push(el('li', {
      className: removed ? 'deleted' : isCurrent ? 'current' : '', 'data-revision': String(revision),
    }, line, value, actions));
  }
  if (!list.length) list.push(el('li', { className: 'empty' }, 'No history is kept for this key.'));
  else if (!shown.cursor && shown.compacted) {
    list.push(el('li', { className: 'empty' }, `Older changes were compacted (history kept after revision ${shown.compacted}).`));
  }
  ui.historyList.replaceChildren(...list);
  ui.historyMore.hidden = !shown.cursor;
  renderDiff();
}

function onHistoryChange(event) {
  const input = event.target.closest('input[data-side]');
  if (!input || !timeline) return;
  timeline[input.dataset.side] = Number(input.value);
  renderDiff();
}

function onHistoryClick(event) {
  const restore = event.target.closest('button[data-restore]');
  if (restore) {
    restoreRevision(Number(restore.dataset.restore));
    return;
  }
  const at = event.target.closest('button[data-at-revision]');
  if (at) readAtRevision(at.dataset.atRevision);
}

/** The text an event is compared as: its value, or nothing once deleted. */
function comparedText(event) {
  if (!event || event.type !== 'put' || !event.item) return '';
  return displayValue(event.item);
}

function renderDiff() {
  const shown = timeline;
  const a = shown && shown.events.find((event) => event.revision === shown.a);
  const b = shown && shown.events.find((event) => event.revision === shown.b);
  ui.diff.hidden = !a || !b;
  if (!a || !b) return;
  ui.diffHeading.textContent = `From revision ${a.revision} (A) to revision ${b.revision} (B)`;
  if (a === b) {
    ui.diffSummary.textContent = 'Pick two different revisions to compare.';
    ui.diffLines.replaceChildren();
    return;
  }
  if (isSecret(a.item) || isSecret(b.item)) {
    ui.diffSummary.textContent = 'Secrets are compared only where they can be opened: reveal each with discfg history --reveal.';
    ui.diffLines.replaceChildren();
    return;
  }
  const ops = diffLines(comparedText(a), comparedText(b));
  if (!ops) {
    ui.diffSummary.textContent = 'These values are too far apart to compare line by line.';
    ui.diffLines.replaceChildren();
    return;
  }
  const added = ops.filter((op) => op.type === 'add').length;
  const removed = ops.filter((op) => op.type === 'del').length;
  ui.diffSummary.textContent = added || removed
    ? `${added} ${added === 1 ? 'line' : 'lines'} added, ${removed} removed.`
    : 'The two values are the same.';
  ui.diffLines.replaceChildren(...renderDiffLines(ops));
}

const DIFF_CONTEXT = 3;

/** Diff lines as elements: changes with three lines of context, longer runs folded. */
function renderDiffLines(ops) {
  const near = new Uint8Array(ops.length);
  ops.forEach((op, index) => {
    if (op.type === 'same') return;
    for (let i = Math.max(0, index - DIFF_CONTEXT); i <= Math.min(ops.length - 1, index + DIFF_CONTEXT); i += 1) near[i] = 1;
  });
  const prefix = { add: '+ ', del: '- ', same: '  ' };
  const words = { add: 'added: ', del: 'removed: ', same: '' };
  const lines = [];
  let skipped = 0;
  const flush = () => {
    if (skipped) lines.push(el('div', { className: 'diff-line skip' }, `… ${skipped} unchanged ${skipped === 1 ? 'line' : 'lines'}`));
    skipped = 0;
  };
  ops.forEach((op, index) => {
    if (op.type === 'same' && !near[index]) {
      skipped += 1;
      return;
    }
    flush();
    lines.push(el('div', { className: `diff-line ${op.type}` },
      el('span', { 'aria-hidden': 'true' }, prefix[op.type]),
      words[op.type] ? el('span', { className: 'sr-only' }, words[op.type]) : '',
      op.text));
  });
  flush();
  return lines;
}

/**
 * Restores a past value as a new change: a compare-and-swap against the value the
 * console shows now (If-Match), or against no value when the key is deleted.
 */
async function restoreRevision(revision) {
  const shown = timeline;
  const current = session;
  const event = shown && shown.events.find((candidate) => candidate.revision === revision);
  if (!event || !event.item || !editor || editor.busy) return;
  ui.historyError.textContent = '';
  if (isSecret(event.item)) {
    ui.historyError.textContent = 'A secret opens only at the version it was sealed for, so its old value cannot be restored as it is: reveal it with discfg history --reveal and set it again with discfg set --secret.';
    return;
  }
  if (isDirty()) {
    ui.historyError.textContent = 'You have unsaved changes: save or discard them before restoring.';
    return;
  }
  const { key } = shown;
  const now = current.items.get(key);
  const condition = now ? { 'If-Match': etag(now.modRevision) } : { 'If-None-Match': '*' };
  const editing = editor;
  setEditorBusy(editing, true);
  try {
    const envelope = await api('PUT', keyUrl(current.name, key), {
      body: bodyOf(event.item),
      headers: { 'Content-Type': event.item.contentType || 'text/plain', ...condition },
      signal: current.controller.signal,
    });
    if (current !== session) return;
    const { item } = envelope;
    current.items.set(key, item);
    current.revision = Math.max(current.revision, envelope.revision ?? item.modRevision);
    renderRevision();
    scheduleTreeRender(current);
    if (editor === editing) loadEditor({ key, isNew: false, item }); // reloads the history too
    flash(`Restored the value of revision ${revision} as revision ${item.modRevision}`);
  } catch (error) {
    if (isAbort(error) || current !== session) return;
    if (error.status === 412) {
      ui.historyError.textContent = `Not restored: ${key} changed meanwhile. Its history now shows the latest change; restore again if you still want to.`;
      loadHistory(true);
    } else if (error.code === 'schemaViolation' && error.violations.length && editor === editing) {
      showViolations(error.violations);
    } else {
      showFailure(error, ui.historyError);
    }
  } finally {
    setEditorBusy(editing, false);
  }
}

// ---------------------------------------------------------------------------
// The whole config at a revision
// ---------------------------------------------------------------------------

const MAX_REVISION = 9223372036854775807n;

/** A revision typed by a person, as its decimal text, or null when it is not one. */
function parseRevision(text) {
  const trimmed = text.trim();
  if (!/^\d{1,19}$/.test(trimmed) || BigInt(trimmed) > MAX_REVISION) return null;
  return BigInt(trimmed).toString();
}

function onAtRevisionToggle() {
  togglePanel(ui.atRevisionToggle, ui.atRevisionForm, () => {
    ui.atRevisionError.textContent = '';
    if (!ui.atRevision.value && session) ui.atRevision.value = String(session.revision);
    ui.atRevision.focus();
    ui.atRevision.select();
  }, hideAtRevision);
}

function hideAtRevision() {
  setPanel(ui.atRevisionToggle, ui.atRevisionForm, false);
  ui.atRevisionError.textContent = '';
}

function onAtRevisionSubmit(event) {
  event.preventDefault();
  const revision = parseRevision(ui.atRevision.value);
  if (revision === null) {
    ui.atRevisionError.textContent = 'A revision is a whole number from 0 to 9223372036854775807.';
    ui.atRevision.focus();
    return;
  }
  readAtRevision(revision);
}

/** Reads the config as it was at `revision` (its export) and shows it, read-only. */
async function readAtRevision(revision) {
  const current = session;
  if (!current) return;
  ui.atRevisionError.textContent = '';
  ui.configError.textContent = '';
  let snapshot;
  try {
    snapshot = await api('GET', `${configUrl(current.name)}/export?format=json&revision=${revision}`, { signal: current.controller.signal });
  } catch (error) {
    if (isAbort(error) || current !== session) return;
    showFailure(error, ui.atRevisionForm.hidden ? ui.configError : ui.atRevisionError);
    return;
  }
  if (current !== session) return;
  hideAtRevision();
  current.snapshotRevision = revision;
  const items = [...(snapshot.items || [])].sort((a, b) => byText(a.key, b.key));
  ui.snapshotHeading.textContent = `${current.name} at revision ${snapshot.revision ?? revision}`;
  ui.snapshotCount.textContent = `${items.length} ${items.length === 1 ? 'key' : 'keys'}, read-only. The config is at revision ${current.revision} now; restore a value from its key's history.`;
  const rows = [];
  for (const item of items) {
    const type = isSecret(item) ? 'secret' : item.contentType || 'text/plain';
    rows.push(
      el('dt', {}, item.key, ' ', el('span', { className: 'badge' }, type)),
      el('dd', {}, el('pre', { className: 'value-text', 'data-snapshot-key': item.key }, displayValue(item))),
    );
  }
  if (!rows.length) rows.push(el('dd', { className: 'empty' }, 'The config had no keys at that revision.'));
  ui.snapshotKeys.replaceChildren(...rows);
  ui.snapshot.hidden = false;
  ui.panes.hidden = true;
  ui.snapshotHeading.focus();
}

function closeSnapshot(focus = true) {
  ui.snapshot.hidden = true;
  ui.snapshotKeys.replaceChildren();
  ui.panes.hidden = false;
  if (session) session.snapshotRevision = null;
  if (focus) ui.atRevisionToggle.focus();
}

// ---------------------------------------------------------------------------
// Export and import
// ---------------------------------------------------------------------------

const importTypes = { json: 'application/json', yaml: 'application/yaml', env: 'text/plain; charset=utf-8' };

function onTransferToggle() {
  togglePanel(ui.transferToggle, ui.transfer, () => {
    ui.transferError.textContent = '';
    ui.transferStatus.textContent = '';
    ui.exportFormat.focus();
  }, hideTransfer);
}

function hideTransfer() {
  setPanel(ui.transferToggle, ui.transfer, false);
  ui.importForm.reset();
  ui.importReplaceBox.hidden = true;
}

/** Downloads the config's export (at `revision`, or now) as a file. */
async function downloadExport(format, revision, area) {
  const current = session;
  if (!current) return;
  area.textContent = '';
  const at = revision ? `&revision=${revision}` : '';
  try {
    const response = await api('GET', `${configUrl(current.name)}/export?format=${format}${at}`, {
      headers: { Accept: '*/*' }, signal: current.controller.signal, raw: true,
    });
    // A body cut short (history needed for the export gone meanwhile) rejects here.
    const blob = await response.blob();
    if (current !== session) return;
    const name = `${current.name}${revision ? `-r${revision}` : ''}.${format}`;
    const url = URL.createObjectURL(blob);
    const link = el('a', { href: url, download: name, hidden: true });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 60000);
    flash(`Downloaded ${name} (${blob.size} bytes)`);
  } catch (error) {
    if (isAbort(error) || current !== session) return;
    if (error instanceof ApiError) showFailure(error, area);
    else area.textContent = 'The export ended before it was complete (the history it needed changed meanwhile). Export again.';
  }
}

/** The format a file's name implies, or null. */
function formatOfFile(name) {
  const lower = name.toLowerCase();
  if (lower.endsWith('.json')) return 'json';
  if (lower.endsWith('.yaml') || lower.endsWith('.yml')) return 'yaml';
  if (lower.endsWith('.env') || lower.startsWith('.env')) return 'env';
  return null;
}

function onImportReplaceToggle() {
  ui.importReplaceBox.hidden = !ui.importReplace.checked;
  if (ui.importReplace.checked && session) {
    ui.importReplaceLabel.textContent = `Type “${session.name}” to delete every key of it the file does not have`;
    ui.importReplaceConfirm.value = '';
    ui.importReplaceConfirm.focus();
  }
}

async function onImport(event) {
  event.preventDefault();
  const current = session;
  if (!current) return;
  ui.transferError.textContent = '';
  ui.transferStatus.textContent = '';
  const file = ui.importFile.files[0];
  if (!file) {
    ui.transferError.textContent = 'Choose a file to import.';
    ui.importFile.focus();
    return;
  }
  const format = ui.importFormat.value || formatOfFile(file.name);
  if (!format) {
    ui.transferError.textContent = `The format of “${file.name}” cannot be told from its name: choose JSON, YAML or env.`;
    ui.importFormat.focus();
    return;
  }
  const replace = ui.importReplace.checked;
  if (replace && ui.importReplaceConfirm.value.trim() !== current.name) {
    ui.transferError.textContent = `Replacing deletes keys: type the config's name, ${current.name}, exactly to go on.`;
    ui.importReplaceConfirm.focus();
    return;
  }
  ui.importSubmit.disabled = true;
  try {
    // The file itself is the body: the browser sends it without reading it into the page.
    const envelope = await api('POST', `${configUrl(current.name)}/import?format=${format}${replace ? '&replace' : ''}`, {
      body: file, headers: { 'Content-Type': importTypes[format] }, signal: current.controller.signal,
    });
    if (current !== session) return;
    const changed = (envelope.events || []).length;
    const unchanged = envelope.unchanged || 0;
    const message = changed
      ? `Imported ${file.name}: ${changed} ${changed === 1 ? 'key' : 'keys'} changed, ${unchanged} unchanged, now at revision ${envelope.revision}.`
      : `Imported ${file.name}: nothing changed (${unchanged} ${unchanged === 1 ? 'key' : 'keys'} already as in the file).`;
    ui.transferStatus.textContent = message;
    flash(message);
    ui.importForm.reset();
    ui.importReplaceBox.hidden = true;
    // The watch brings the changes; applying them here too shows them at once.
    for (const change of envelope.events || []) applyChange(current, change);
  } catch (error) {
    if (isAbort(error) || current !== session) return;
    showFailure(error, ui.transferError);
  } finally {
    ui.importSubmit.disabled = false;
  }
}

// ---------------------------------------------------------------------------
// Tokens
// ---------------------------------------------------------------------------

/** The token id being confirmed for revocation, or null. */
let revoking = null;
let tokenList = [];
/**
 * Whether the token just issued closed the server: it was open until its first token
 * (serve --auth auto) and this tab has no token. "Done" then goes to the sign-in form.
 */
let closedByIssue = false;

async function showTokens() {
  closeConfig();
  showView('tokens');
  clearErrors();
  revoking = null;
  closedByIssue = false;
  ui.issued.hidden = true;
  ui.issuedToken.value = '';
  ui.tokensHeading.focus();
  await loadTokens();
}

async function loadTokens() {
  try {
    const envelope = await api('GET', TOKENS_URL);
    if (!signedIn || window.location.hash !== TOKENS_HASH) return;
    tokenList = envelope.tokens || [];
    ui.tokensRefused.hidden = true;
    ui.tokensBody.hidden = false;
    renderTokens();
  } catch (error) {
    if (isAbort(error)) return;
    if (error.status === 401 && !storedToken() && !ui.issued.hidden) {
      // The token just issued was the server's first, and it now takes requests only
      // with a token: keep the new one on screen to be copied, signing out at "Done".
      closedByIssue = true;
      ui.tokensRefused.textContent = 'This server now takes requests only with a token. Copy the new token, then choose Done to sign in with it.';
      ui.tokensRefused.hidden = false;
      return;
    }
    ui.tokensBody.hidden = true;
    if (error.status === 403) {
      ui.tokensRefused.textContent = 'Tokens are managed by an admin of every config, and the token you signed in with is not one. Ask an admin, or sign in with an admin token.';
      ui.tokensRefused.hidden = false;
    } else if (error.status === 400) {
      ui.tokensRefused.textContent = `This server manages no tokens: ${error.message}`;
      ui.tokensRefused.hidden = false;
    } else {
      showFailure(error, ui.tokensError);
    }
  }
}

/** Whether `id` is the token this tab signed in with. */
const isOwnToken = (id) => (storedToken() || '').startsWith(`dcfg_${id}_`);

function renderTokens() {
  const rows = tokenList.map((token) => {
    const own = isOwnToken(token.id);
    const row = el('li', { 'data-token': token.id },
      el('span', { className: 'token-id' }, `dcfg_${token.id}_…`), ' ',
      el('span', { className: 'badge' }, token.role), ' ',
      el('span', {}, token.configs && token.configs.length ? `configs: ${token.configs.join(', ')}` : 'every config'), ' ',
      token.description ? el('span', { className: 'hint' }, token.description) : '', ' ',
      token.createdAt ? ageElement(token.createdAt, 'issued ') : '', ' ',
      own ? el('span', { className: 'badge' }, 'signed in with it') : '');
    if (revoking === token.id) {
      row.append(el('div', { className: 'confirm-box' },
        el('p', {}, own
          ? `Revoke dcfg_${token.id}? It is the token you signed in with: this console signs out, and everything using it is refused at once.`
          : `Revoke dcfg_${token.id}? Everything using it is refused at once.`),
        el('div', { className: 'actions' },
          el('button', { type: 'button', className: 'danger', 'data-revoke-confirm': token.id }, 'Revoke token'),
          el('button', { type: 'button', 'data-revoke-cancel': token.id }, 'Cancel'))));
    } else {
      row.append(el('div', { className: 'actions' },
        el('button', { type: 'button', className: 'danger-text', 'data-revoke': token.id, 'aria-label': `Revoke dcfg_${token.id}` }, 'Revoke…')));
    }
    return row;
  });
  if (!rows.length) rows.push(el('li', { className: 'empty' }, 'No tokens.'));
  ui.tokens.replaceChildren(...rows);
}

async function onTokensClick(event) {
  const ask = event.target.closest('button[data-revoke]');
  if (ask) {
    revoking = ask.dataset.revoke;
    renderTokens();
    ui.tokens.querySelector(`button[data-revoke-cancel="${CSS.escape(revoking)}"]`).focus();
    return;
  }
  const cancel = event.target.closest('button[data-revoke-cancel]');
  if (cancel) {
    const id = revoking;
    revoking = null;
    renderTokens();
    const again = ui.tokens.querySelector(`button[data-revoke="${CSS.escape(id)}"]`);
    if (again) again.focus();
    return;
  }
  const confirm = event.target.closest('button[data-revoke-confirm]');
  if (!confirm) return;
  const id = confirm.dataset.revokeConfirm;
  confirm.disabled = true;
  ui.tokensError.textContent = '';
  try {
    await api('DELETE', `${TOKENS_URL}/${encodeURIComponent(id)}`);
    revoking = null;
    if (isOwnToken(id)) {
      signOut(`You revoked dcfg_${id}, the token this console signed in with.`);
      return;
    }
    flash(`Revoked dcfg_${id}`);
    await loadTokens();
    ui.tokensHeading.focus();
  } catch (error) {
    confirm.disabled = false;
    showFailure(error, ui.tokensError);
  }
}

async function onIssueToken(event) {
  event.preventDefault();
  ui.tokensError.textContent = '';
  const configs = ui.newTokenConfigs.value.split(/[\s,]+/).filter(Boolean);
  const bad = configs.find((name) => !CONFIG_NAME.test(name));
  if (bad) {
    ui.tokensError.textContent = `“${bad}” is not a config name (1 to 200 letters, digits, “_”, “.” or “-”).`;
    ui.newTokenConfigs.focus();
    return;
  }
  const request = { role: ui.newTokenRole.value };
  if (configs.length) request.configs = configs;
  const description = ui.newTokenDescription.value.trim();
  if (description) request.description = description;
  ui.newTokenSubmit.disabled = true;
  try {
    const envelope = await api('POST', TOKENS_URL, {
      body: JSON.stringify(request), headers: { 'Content-Type': 'application/json' },
    });
    ui.newToken.reset();
    ui.issuedToken.value = envelope.token;
    ui.issued.hidden = false;
    ui.issuedHeading.focus();
    await loadTokens();
  } catch (error) {
    showFailure(error, ui.tokensError);
  } finally {
    ui.newTokenSubmit.disabled = false;
  }
}

async function onCopyIssued() {
  ui.issuedToken.select();
  try {
    await navigator.clipboard.writeText(ui.issuedToken.value);
    flash('Copied the token');
  } catch {
    flash('Selected the token: copy it with Ctrl+C');
  }
}

/** "Done": the token leaves the page; it cannot be shown again. */
function onIssuedDone() {
  ui.issuedToken.value = '';
  ui.issued.hidden = true;
  if (closedByIssue) {
    closedByIssue = false;
    signOut('Sign in with the token you issued, or another.');
    return;
  }
  ui.newTokenRole.focus();
}

// ---------------------------------------------------------------------------
// Wiring
// ---------------------------------------------------------------------------

function start() {
  ui.signin.addEventListener('submit', onSignIn);
  ui.signout.addEventListener('click', () => signOut());
  ui.configsNav.addEventListener('click', () => navigate(null));
  ui.tokensNav.addEventListener('click', () => navigate(TOKENS_HASH));
  ui.tokens.addEventListener('click', onTokensClick);
  ui.newToken.addEventListener('submit', onIssueToken);
  ui.issuedCopy.addEventListener('click', onCopyIssued);
  ui.issuedDone.addEventListener('click', onIssuedDone);
  ui.configs.addEventListener('click', onConfigClick);
  ui.newConfig.addEventListener('submit', onCreateConfig);

  ui.back.addEventListener('click', () => navigate(null));
  ui.deleteConfig.addEventListener('click', onDeleteConfigToggle);
  ui.deleteConfigForm.addEventListener('submit', onDeleteConfig);
  ui.deleteConfigCancel.addEventListener('click', () => { hideDeleteConfig(); ui.deleteConfig.focus(); });
  ui.atRevisionToggle.addEventListener('click', onAtRevisionToggle);
  ui.atRevisionForm.addEventListener('submit', onAtRevisionSubmit);
  ui.atRevisionCancel.addEventListener('click', () => { hideAtRevision(); ui.atRevisionToggle.focus(); });
  ui.snapshotClose.addEventListener('click', () => closeSnapshot());
  ui.snapshotDownload.addEventListener('click', () => {
    if (session && session.snapshotRevision) downloadExport('json', session.snapshotRevision, ui.configError);
  });
  ui.transferToggle.addEventListener('click', onTransferToggle);
  ui.transferClose.addEventListener('click', () => { hideTransfer(); ui.transferToggle.focus(); });
  ui.exportDownload.addEventListener('click', () => downloadExport(ui.exportFormat.value, null, ui.transferError));
  ui.importReplace.addEventListener('change', onImportReplaceToggle);
  ui.importForm.addEventListener('submit', onImport);

  ui.keyFilter.addEventListener('input', onFilterInput);
  ui.keys.addEventListener('click', onTreeClick);
  ui.newKey.addEventListener('click', newKey);

  ui.editorForm.addEventListener('submit', onSave);
  ui.editorForm.addEventListener('keydown', (event) => {
    // Ctrl+S / Cmd+S saves, as in an editor.
    if ((event.ctrlKey || event.metaKey) && event.key.toLowerCase() === 's') {
      event.preventDefault();
      ui.editorForm.requestSubmit(ui.save);
    }
  });
  ui.value.addEventListener('input', onEditorInput);
  ui.schemaInfo.addEventListener('click', onSchemaClick);
  ui.contentType.addEventListener('input', onEditorInput);
  ui.formatJson.addEventListener('click', onFormatJson);
  ui.historyToggle.addEventListener('click', onHistoryToggle);
  ui.historyList.addEventListener('click', onHistoryClick);
  ui.historyList.addEventListener('change', onHistoryChange);
  ui.historyMore.addEventListener('click', () => loadHistory(false));
  ui.secretKey.addEventListener('change', onSecretKeyChosen);
  ui.secretReveal.addEventListener('click', revealSecret);
  ui.secretHide.addEventListener('click', hideSecret);
  ui.deleteKey.addEventListener('click', onDeleteKey);
  ui.deleteConfirmYes.addEventListener('click', onDeleteConfirmed);
  ui.deleteConfirmNo.addEventListener('click', onDeleteCancel);
  ui.changedLoad.addEventListener('click', onLoadCurrent);
  ui.conflictReapply.addEventListener('click', onConflictReapply);
  ui.conflictDiscard.addEventListener('click', onConflictDiscard);

  window.addEventListener('popstate', () => route());
  setInterval(refreshAges, AGE_REFRESH_MS);

  // A token from earlier in this tab (a reload): try it. Otherwise try without one: a
  // server that needs none shows the configs, one that needs a token the sign-in form.
  enter({ opening: storedToken() === null });
}

start();
