// discfg web console: ES modules, loaded by the page without a build step, in layers
// that import only downward: the API client (api.js), JSON, diffs, schemas, sealed
// secrets and the state (state.js) at the bottom; the page's elements, formatting,
// messages and navigation (elements.js, format.js, page.js) on them; then the views
// (tree, history, editor, keys, watch, flags, deployments, configs, tokens, sign-in...).
// This one is the top: it gives each view what it must call above it, wires the page's
// events, and starts.
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

import { storedToken, whenSignInNeeded } from './api.js?v={{version}}';
import { state } from './state.js?v={{version}}';
import { ui } from './elements.js?v={{version}}';
import { AGE_REFRESH_MS, refreshAges } from './format.js?v={{version}}';
import { clearErrors, navigate, registerRoutes, route, TOKENS_HASH } from './page.js?v={{version}}';
import { afterTreeRender, onFilterInput, onTreeClick } from './tree.js?v={{version}}';
import { loadHistory, onHistoryChange, onHistoryToggle } from './history.js?v={{version}}';
import { closeSnapshot, hideAtRevision, onAtRevisionSubmit, onAtRevisionToggle } from './snapshot.js?v={{version}}';
import { hideSecret, onSecretKeyChosen, revealSecret } from './secrets.js?v={{version}}';
import { onSchemaClick } from './editor-schema.js?v={{version}}';
import { followAddress, newKey, onEditorInput, onFormatJson, requestKey } from './editor.js?v={{version}}';
import { onConflictDiscard } from './editor-conflict.js?v={{version}}';
import { onLoadCurrent } from './editor-changes.js?v={{version}}';
import { onConflictReapply, onSave } from './editor-save.js?v={{version}}';
import { onDeleteCancel, onDeleteConfirmed, onDeleteKey } from './editor-delete.js?v={{version}}';
import { onHistoryClick } from './history-restore.js?v={{version}}';
import { downloadExport, hideTransfer, onImport, onImportReplaceToggle, onTransferToggle } from './transfer.js?v={{version}}';
import { hideDeleteConfig, onConfigClick, onCreateConfig, onDeleteConfig, onDeleteConfigToggle, openConfig, showConfigs } from './configs.js?v={{version}}';
import { onCopyIssued, onIssuedDone, onIssueToken, onTokensClick, showTokens } from './tokens.js?v={{version}}';
import { enter, onSignIn, signOut } from './signin.js?v={{version}}';
import { hideFlags, onFlagConfirmCancel, onFlagConfirmed, onFlagsClick, onFlagsToggle, onKeysRendered } from './flags.js?v={{version}}';
import { onDeploymentRecords } from './deployments.js?v={{version}}';
import { onDeployConfirmCancel, onDeployConfirmed, onDeploymentsClick } from './deployment-actions.js?v={{version}}';
import { hideRevisions, onCompare, onRevisionsToggle, onRollbackCancel, onRollbackConfirmed, onRollbackReview } from './revisions.js?v={{version}}';

// ---------------------------------------------------------------------------
// Wiring
// ---------------------------------------------------------------------------

function start() {
  // What each address shows, what a request refused for its token does, and what follows
  // a redraw of the key tree (the flags, the deployments): given here, so that page.js,
  // api.js and tree.js import no view.
  registerRoutes({ configs: showConfigs, config: openConfig, key: followAddress, tokens: showTokens });
  whenSignInNeeded(signOut);
  afterTreeRender((current) => {
    onKeysRendered(current);
    onDeploymentRecords(current);
  });

  // Each thing the user does starts with no error from an earlier one on the page: the
  // boxes are cleared before the control's own handler runs (capture phase), so what it
  // reports stays.
  const acting = (event) => {
    if (event.type === 'submit' || event.target.closest('button, input[type="radio"], input[type="checkbox"]')) clearErrors();
  };
  document.addEventListener('click', acting, true);
  document.addEventListener('submit', acting, true);

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
    if (state.session && state.session.snapshotRevision) downloadExport('json', state.session.snapshotRevision, ui.configError);
  });
  ui.revisionsToggle.addEventListener('click', onRevisionsToggle);
  ui.compareForm.addEventListener('submit', onCompare);
  ui.rollbackForm.addEventListener('submit', onRollbackReview);
  ui.rollbackYes.addEventListener('click', onRollbackConfirmed);
  ui.rollbackNo.addEventListener('click', onRollbackCancel);
  ui.revisionsClose.addEventListener('click', () => { hideRevisions(); ui.revisionsToggle.focus(); });
  ui.flagsToggle.addEventListener('click', onFlagsToggle);
  ui.flagsClose.addEventListener('click', () => { hideFlags(); ui.flagsToggle.focus(); });
  ui.flagsList.addEventListener('click', onFlagsClick);
  ui.flagConfirmYes.addEventListener('click', onFlagConfirmed);
  ui.flagConfirmNo.addEventListener('click', onFlagConfirmCancel);
  ui.flagMessage.addEventListener('keydown', (event) => {
    // Enter in the message confirms, as a form's submit would.
    if (event.key === 'Enter') {
      event.preventDefault();
      ui.flagConfirmYes.click();
    }
  });
  ui.deploymentsList.addEventListener('click', onDeploymentsClick);
  ui.deployConfirmYes.addEventListener('click', onDeployConfirmed);
  ui.deployConfirmNo.addEventListener('click', onDeployConfirmCancel);
  ui.deployMessage.addEventListener('keydown', (event) => {
    // Enter in the message confirms, as a form's submit would.
    if (event.key === 'Enter') {
      event.preventDefault();
      ui.deployConfirmYes.click();
    }
  });
  ui.transferToggle.addEventListener('click', onTransferToggle);
  ui.transferClose.addEventListener('click', () => { hideTransfer(); ui.transferToggle.focus(); });
  ui.exportDownload.addEventListener('click', () => downloadExport(ui.exportFormat.value, null, ui.transferError));
  ui.importReplace.addEventListener('change', onImportReplaceToggle);
  ui.importForm.addEventListener('submit', onImport);

  ui.keyFilter.addEventListener('input', onFilterInput);
  ui.keys.addEventListener('click', (event) => onTreeClick(event, requestKey));
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

  window.addEventListener('popstate', () => {
    clearErrors();
    route();
  });
  setInterval(refreshAges, AGE_REFRESH_MS);

  // A token from earlier in this tab (a reload): try it. Otherwise try without one: a
  // server that needs none shows the configs, one that needs a token the sign-in form.
  enter({ opening: storedToken() === null });
}

start();
