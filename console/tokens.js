// Tokens: listing, issuing (shown once) and revoking the server's bearer tokens.

import { api, isAbort, signInNeeded, storedToken, TOKENS_URL } from './api.js?v={{version}}';
import { closeConfig, state } from './state.js?v={{version}}';
import { el, ui } from './elements.js?v={{version}}';
import { ageElement } from './format.js?v={{version}}';
import { clearErrors, CONFIG_NAME, flash, showFailure, showView, TOKENS_HASH } from './page.js?v={{version}}';

// ---------------------------------------------------------------------------
// Tokens
// ---------------------------------------------------------------------------

/** The token id being confirmed for revocation, or null. */
export let revoking = null;
export let tokenList = [];
/**
 * Whether the token just issued closed the server: it was open until its first token
 * (serve --auth auto) and this tab has no token. "Done" then goes to the sign-in form.
 */
export let closedByIssue = false;

export async function showTokens() {
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

export async function loadTokens() {
  try {
    const envelope = await api('GET', TOKENS_URL);
    if (!state.signedIn || window.location.hash !== TOKENS_HASH) return;
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
export const isOwnToken = (id) => (storedToken() || '').startsWith(`dcfg_${id}_`);

export function renderTokens() {
  const rows = tokenList.map((token) => {
    const own = isOwnToken(token.id);
    const row = el('li', { 'data-token': token.id },
      el('span', { className: 'token-id' }, `dcfg_${token.id}_…`), ' ',
      el('span', { className: 'badge' }, token.role), ' ',
      el('span', {}, (token.scopes || token.configs || []).length ? `scopes: ${(token.scopes || token.configs).join(', ')}` : 'every config'), ' ',
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

export async function onTokensClick(event) {
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
      signInNeeded(`You revoked dcfg_${id}, the token this console signed in with.`);
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

export async function onIssueToken(event) {
  event.preventDefault();
  ui.tokensError.textContent = '';
  // Scopes: a config (web), or a key prefix in one (web:/app/); the server checks each.
  const scopes = ui.newTokenConfigs.value.split(/[\s,]+/).filter(Boolean);
  const bad = scopes.find((scope) => !CONFIG_NAME.test(scope.split(':')[0]));
  if (bad) {
    ui.tokensError.textContent = `“${bad}” does not start with a config name (1 to 200 letters, digits, “_”, “.” or “-”).`;
    ui.newTokenConfigs.focus();
    return;
  }
  const request = { role: ui.newTokenRole.value };
  if (scopes.length) request.scopes = scopes;
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

export async function onCopyIssued() {
  ui.issuedToken.select();
  try {
    await navigator.clipboard.writeText(ui.issuedToken.value);
    flash('Copied the token');
  } catch {
    flash('Selected the token: copy it with Ctrl+C');
  }
}

/** "Done": the token leaves the page; it cannot be shown again. */
export function onIssuedDone() {
  ui.issuedToken.value = '';
  ui.issued.hidden = true;
  if (closedByIssue) {
    closedByIssue = false;
    signInNeeded('Sign in with the token you issued, or another.');
    return;
  }
  ui.newTokenRole.focus();
}

/** Forgets the tokens listed (on sign-out). */
export function forgetTokens() {
  tokenList = [];
}
