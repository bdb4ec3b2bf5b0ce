// The console's API client: every request to the REST API goes through `api`, which
// sends the bearer token the user signed in with and turns an error answer into an
// `ApiError` (status, code, message, field, Retry-After, schema violations).
// The page is served at <base>/ui/, the API at <base>/v1, so the console also works
// behind a path prefix (an API Gateway stage, a reverse proxy). It imports no view: when
// the token is missing or no longer valid, it calls what console.js gave whenSignInNeeded.

export const TOKEN_KEY = 'discfg.token';
export const API = new URL('../v1', window.location.href).pathname;
export const TOKENS_URL = new URL('../admin/tokens', window.location.href).pathname;

// ---------------------------------------------------------------------------
// The API
// ---------------------------------------------------------------------------

/** An error answer of the API: its HTTP status, error code, message and field. */
export class ApiError extends Error {
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

export const isAbort = (error) => error && error.name === 'AbortError';

export function storedToken() {
  return sessionStorage.getItem(TOKEN_KEY);
}

/**
 * Calls the API: adds the bearer token, sends `body` as is, and returns the parsed
 * JSON envelope, or the Response itself with `raw` (for streams). Error answers are
 * thrown as ApiError with the envelope's code and message; a failed connection as an
 * ApiError with status 0. An aborted request throws the AbortError.
 */
export async function api(method, path, { body, headers = {}, signal, raw = false } = {}) {
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
export async function errorFrom(response) {
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

export const configUrl = (name) => `${API}/${encodeURIComponent(name)}`;

/** A key's path for a URL: without the leading slash, each segment encoded. */
export const keySegments = (key) => key.replace(/^\//, '').split('/').map(encodeURIComponent).join('/');

/** The URL of a key. */
export const keyUrl = (config, key) => `${configUrl(config)}/keys/${keySegments(key)}`;

/** The URL of a key's history. */
export const historyUrl = (config, key) => `${configUrl(config)}/history/${keySegments(key)}`;

/** An ETag for If-Match: the modRevision, quoted. */
export const etag = (revision) => `"${revision}"`;

// ---------------------------------------------------------------------------
// Signing in again
// ---------------------------------------------------------------------------

/** What the console does when a request needs the user to sign in again: set by console.js. */
let signInHandler = null;

/**
 * Sets what happens when the token is missing or no longer valid (the console's
 * sign-out), so that this client and the views using it import no sign-in view.
 */
export function whenSignInNeeded(handler) {
  signInHandler = handler;
}

/** The token is missing or no longer valid: back to the sign-in form, `message` on it. */
export function signInNeeded(message) {
  if (!signInHandler) throw new Error('discfg console: nothing handles signing in again (whenSignInNeeded)');
  signInHandler(message);
}
