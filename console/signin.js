// Sign-in and sign-out: the bearer token, kept in this tab's sessionStorage only.

import { api, API, storedToken, TOKEN_KEY } from './api.js?v={{version}}';
import { closeConfig, state } from './state.js?v={{version}}';
import { ui } from './elements.js?v={{version}}';
import { clearErrors, route, showView } from './page.js?v={{version}}';
import { forgetTokens } from './tokens.js?v={{version}}';

// ---------------------------------------------------------------------------
// Sign-in and sign-out
// ---------------------------------------------------------------------------

export async function onSignIn(event) {
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
export async function enter({ opening = false } = {}) {
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
  state.signedIn = true;
  ui.token.value = '';
  route(envelope.configs || []);
}

export function showSignIn(message = '') {
  showView('signin');
  ui.signinError.textContent = message;
  ui.token.focus();
}

/** Forgets the token, stops everything and returns to the sign-in form. */
export function signOut(message = '') {
  closeConfig();
  state.signedIn = false;
  sessionStorage.removeItem(TOKEN_KEY);
  ui.configs.replaceChildren();
  ui.tokens.replaceChildren();
  forgetTokens();
  clearErrors();
  if (window.location.hash) {
    window.history.replaceState(null, '', window.location.pathname + window.location.search);
  }
  showSignIn(message);
}
