// What every view of the console shares: messages, panels a button opens, which view
// is shown, and navigation between views by the address. The views register what each
// address shows (registerRoutes, from console.js), so this module imports none of them.

import { isAbort, keySegments, signInNeeded, storedToken } from './api.js?v={{version}}';
import { state } from './state.js?v={{version}}';
import { ui } from './elements.js?v={{version}}';

export const CONFIG_NAME = /^[A-Za-z0-9_.-]{1,200}$/;
export const FLASH_MS = 8000;
export const TOKENS_HASH = '#tokens';

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

/**
 * Clears every error and status box: on navigating, and before each thing the user does
 * (console.js calls it ahead of every click on a control and every submit), so what a
 * box says is about the last action, never an earlier one.
 */
export function clearErrors() {
  for (const area of [
    ui.configsError, ui.configError, ui.deleteConfigError, ui.editorMessage, ui.tokensError,
    ui.atRevisionError, ui.transferError, ui.transferStatus, ui.historyError, ui.secretError, ui.revisionsError, ui.flagsError,
    ui.deploymentsError,
  ]) {
    area.textContent = '';
  }
}

/**
 * Shows an error in `area`, except a 401 (the token is missing or no longer valid),
 * which signs out with the message on the sign-in form.
 */
export function showFailure(error, area) {
  if (isAbort(error)) return;
  if (error.status === 401) {
    signInNeeded(error.message);
    return;
  }
  area.textContent = error.message || String(error);
}

// ---------------------------------------------------------------------------
// Panels a button opens and closes (aria-expanded kept in step)
// ---------------------------------------------------------------------------

/** Opens `panel` below `button` and calls `opened`; or, when it is open, closes it. */
export function togglePanel(button, panel, opened, hide) {
  if (!panel.hidden) {
    hide();
    button.focus();
    return;
  }
  setPanel(button, panel, true);
  opened();
}

export function setPanel(button, panel, open) {
  panel.hidden = !open;
  button.setAttribute('aria-expanded', String(open));
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

/**
 * What the address names: #/CONFIG, or #/CONFIG/KEY/PATH for a key open in it (each
 * segment percent-encoded), so a reload or a shared link opens the same config and key.
 * { config, key } (key null for the config alone), or null when it names no config.
 */
export function addressed() {
  const hash = window.location.hash;
  if (!hash.startsWith('#/')) return null;
  try {
    const [first, ...rest] = hash.slice(2).split('/');
    const config = decodeURIComponent(first);
    if (!CONFIG_NAME.test(config)) return null;
    const key = rest.length && rest.join('') !== '' ? `/${rest.map(decodeURIComponent).join('/')}` : null;
    return { config, key };
  } catch {
    return null;
  }
}

/** The config named in the address, or null. */
export function configFromHash() {
  const address = addressed();
  return address ? address.config : null;
}

/** The address of a config, and of a key open in it. */
export const configHash = (config, key = null) => `#/${encodeURIComponent(config)}${key ? `/${keySegments(key)}` : ''}`;

/**
 * Puts the key open in the editor (or none) in the address, replacing the entry rather
 * than adding one per key, so Back still leaves the config.
 */
export function showKeyInAddress(key) {
  if (!state.session || configFromHash() !== state.session.name) return;
  const hash = configHash(state.session.name, key);
  if (window.location.hash !== hash) window.history.replaceState(null, '', hash);
}

/**
 * What each address shows, set once by console.js (registerRoutes), so this module
 * imports none of the views: `configs(listing)` the list of configs (with a listing
 * already fetched, if any), `config(name)` one config (which opens the key the address
 * names), `key(key)` a key of the config open now (null: none), `tokens()` the tokens.
 */
let routes = null;

/** Sets the views `route` shows; console.js calls it before the first route. */
export function registerRoutes({ configs, config, key, tokens }) {
  routes = { configs, config, key, tokens };
}

/**
 * Opens a config (or the list, for null; the tokens for TOKENS_HASH) and records it in
 * the address and history.
 */
export function navigate(config) {
  const hash = config === TOKENS_HASH ? TOKENS_HASH : config ? configHash(config) : '';
  if (window.location.hash !== hash) {
    window.history.pushState(null, '', hash || window.location.pathname + window.location.search);
  }
  route();
}

/** Shows what the address names. `configs` is a listing already fetched, if any. */
export function route(configs) {
  if (!state.signedIn) return;
  if (window.location.hash === TOKENS_HASH) {
    routes.tokens();
    return;
  }
  const address = addressed();
  if (address) {
    if (!state.session || state.session.name !== address.config) routes.config(address.config);
    else routes.key(address.key);
  } else {
    routes.configs(configs);
  }
}
