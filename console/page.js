// What every view of the console shares: messages, panels a button opens, which view
// is shown, and navigation between views by the address. The views register what each
// address shows (registerRoutes, from console.js), so this module imports none of them.

import { isAbort, signInNeeded, storedToken } from './api.js?v={{version}}';
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

export function clearErrors() {
  for (const area of [
    ui.configsError, ui.configError, ui.deleteConfigError, ui.editorMessage, ui.tokensError,
    ui.atRevisionError, ui.transferError, ui.transferStatus, ui.historyError, ui.secretError,
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
 * What each address shows, set once by console.js (registerRoutes), so this module
 * imports none of the views: `configs(listing)` the list of configs (with a listing
 * already fetched, if any), `config(name)` one config, `tokens()` the tokens.
 */
let routes = null;

/** Sets the views `route` shows; console.js calls it before the first route. */
export function registerRoutes({ configs, config, tokens }) {
  routes = { configs, config, tokens };
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
    routes.tokens();
    return;
  }
  const name = configFromHash();
  if (name) {
    if (!state.session || state.session.name !== name) routes.config(name);
  } else {
    routes.configs(configs);
  }
}
