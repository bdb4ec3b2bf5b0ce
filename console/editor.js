// The editor: a key opened from the tree (or a new one), what it shows of the item,
// whether it holds unsaved edits, and its buttons while a request is under way. Saving
// (editor-save.js), the conflict view (editor-conflict.js), changes made underneath it
// (editor-changes.js), deleting (editor-delete.js) and its schemas (editor-schema.js)
// build on it; secrets are shown by secrets.js.

import { api, isAbort, keyUrl } from './api.js?v={{version}}';
import { isJsonType, jsonObject, jsonProblem, looksLikeJsonContainer, prettyJson } from './json.js?v={{version}}';
import { state } from './state.js?v={{version}}';
import { el, ui } from './elements.js?v={{version}}';
import { ageElement, base64Length, expiryOf, isBinary, isSecret, readableValue } from './format.js?v={{version}}';
import { showFailure, showKeyInAddress } from './page.js?v={{version}}';
import { markCurrentInTree, scheduleTreeRender } from './tree.js?v={{version}}';
import { closeHistory, openHistory } from './history.js?v={{version}}';
import { renderSecret } from './secrets.js?v={{version}}';
import { hideSchema, renderSchemaInfo } from './editor-schema.js?v={{version}}';

/** What was asked for last while the editor had unsaved changes (asking again discards them). */
export let discardTarget = null;

/**
 * Whether the editor may be replaced by `target` (a key, or "new key"): yes when it
 * has no unsaved edits or the same thing is asked for twice in a row; otherwise it
 * says so, and the edits stay.
 */
export function mayDiscardEdits(target, again) {
  if (!state.editor || !isDirty() || discardTarget === target) {
    discardTarget = null;
    return true;
  }
  discardTarget = target;
  ui.editorMessage.textContent = `You have unsaved changes. Save them, or ${again} to discard them.`;
  return false;
}

/** Opens a key from the tree, asking first when that would drop unsaved edits. */
export function requestKey(key) {
  if (state.editor && !state.editor.isNew && state.editor.key === key && isDirty()) {
    ui.value.focus(); // already open, with edits: keep them
    return;
  }
  if (mayDiscardEdits(key, `select ${key} again`)) openKey(key);
}

export async function openKey(key) {
  const current = state.session;
  const ticket = (state.openTicket += 1);
  ui.configError.textContent = '';
  try {
    const envelope = await api('GET', keyUrl(current.name, key), { signal: current.controller.signal });
    if (ticket !== state.openTicket || current !== state.session) return;
    current.changed.delete(key);
    loadEditor({ key, isNew: false, item: envelope.item });
    scheduleTreeRender(current);
    if (window.matchMedia('(max-width: 56rem)').matches) ui.editor.scrollIntoView({ block: 'start' });
  } catch (error) {
    if (isAbort(error) || ticket !== state.openTicket || current !== state.session) return;
    if (error.status === 404 && current.items.delete(key)) scheduleTreeRender(current);
    showFailure(error, state.editor ? ui.editorMessage : ui.configError);
  }
}

/**
 * The address names `key` in the open config (null: the config alone), after Back or
 * Forward or an address typed: opens that key, or closes a key without unsaved edits.
 */
export function followAddress(key) {
  if (!state.session) return;
  if (!key) {
    if (state.editor && !state.editor.isNew && !isDirty()) closeEditor();
    return;
  }
  if (state.editor && !state.editor.isNew && state.editor.key === key) return;
  if (!state.session.items.has(key)) {
    ui.configError.textContent = `The address names the key ${key}, which ${state.session.name} does not have (it may have been deleted).`;
    showKeyInAddress(state.editor && !state.editor.isNew ? state.editor.key : null);
    return;
  }
  requestKey(key);
  // Kept by unsaved edits (the editor asks first): the address names what is open.
  if (state.editor && isDirty()) showKeyInAddress(state.editor.isNew ? null : state.editor.key);
}

/** Starts a new key, its path prefilled with the folder of the key open now. */
export function newKey() {
  if (!state.session || !mayDiscardEdits('new key', 'press “New key” again')) return;
  const folder = state.editor && !state.editor.isNew ? state.editor.key.slice(0, state.editor.key.lastIndexOf('/') + 1) : '/';
  loadEditor({ key: folder, isNew: true, item: null });
  ui.keyPath.focus();
  ui.keyPath.setSelectionRange(folder.length, folder.length);
}

/** Puts a key (or a new one) in the editor, dropping notices, conflicts and messages. */
export function loadEditor({ key, isNew, item }) {
  const secret = isSecret(item);
  const binary = !secret && isBinary(item);
  // Binary values and secrets are shown, not edited: a textarea cannot hold bytes, and
  // a secret can only be sealed where its config's key is.
  const readOnly = binary || secret;
  const originalContentType = (item && item.contentType) || 'text/plain';
  state.editor = {
    key,
    isNew,
    item,
    baseRevision: item ? item.modRevision : null,
    // A JSON value is shown indented; storedValue is its text as stored, which a save
    // of the value left as shown sends back, so opening and saving changes no layout.
    originalValue: item && !readOnly ? readableValue(item) : '',
    storedValue: item && !readOnly ? item.value : '',
    originalContentType,
    originalJson: item && !readOnly && isJsonType(originalContentType) ? jsonObject(item.value) : null,
    readOnly,
    busy: false,
    pending: null,
    latest: null,
    schemaShown: null,
  };
  state.conflict = null;
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
  ui.value.value = state.editor.originalValue;
  ui.changeMessage.value = '';
  ui.contentType.value = state.editor.originalContentType;
  ui.mergeField.hidden = !state.editor.originalJson;
  ui.mergePatch.checked = true;
  ui.ttlNote.textContent = state.editor.originalJson
    ? 'This key has a TTL: saving only the members you changed keeps it; saving the whole value stores it without one, so it no longer expires.'
    : 'This key has a TTL: saving it here stores the value without one, so it no longer expires.';
  showViolations([]);
  hideSchema();
  renderSchemaInfo();
  ui.save.hidden = readOnly;
  ui.changeMessageField.hidden = readOnly;
  ui.historyToggle.hidden = isNew;
  renderSecret(secret ? item : null);
  // An open history follows the editor from key to key, and shows each new change.
  if (state.timeline && isNew) closeHistory();
  else if (state.timeline) openHistory(key);
  ui.deleteKey.hidden = isNew;

  ui.changedNotice.hidden = true;
  ui.deleteConfirm.hidden = true;
  ui.editorMessage.textContent = '';
  ui.conflict.hidden = true; // state.conflict was dropped above
  syncEditorButtons();
  onEditorInput();
  markCurrentInTree();
  showKeyInAddress(isNew ? null : key);
}

export function closeEditor() {
  state.editor = null;
  state.conflict = null;
  showViolations([]);
  ui.schemaView.hidden = true;
  closeHistory();
  renderSecret(null);
  ui.editor.hidden = true;
  ui.editorEmpty.hidden = false;
  ui.conflict.hidden = true;
  markCurrentInTree();
  showKeyInAddress(null);
}

/** Fills the metadata list; hidden for a new key. */
export function renderMeta(item) {
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
export function isDirty() {
  if (!state.editor || state.editor.readOnly) return false;
  return ui.value.value !== state.editor.originalValue || ui.contentType.value !== state.editor.originalContentType;
}

/** After each edit: the unsaved marker and whether "Format JSON" applies. */
export function onEditorInput() {
  if (!state.editor) return;
  ui.dirty.hidden = !isDirty();
  ui.formatJson.hidden = state.editor.readOnly
    || !(isJsonType(ui.contentType.value) || looksLikeJsonContainer(ui.value.value));
}

export function onFormatJson() {
  const problem = jsonProblem(ui.value.value);
  if (problem) {
    ui.editorMessage.textContent = `Cannot format: the value is not valid JSON (${problem}).`;
    return;
  }
  ui.editorMessage.textContent = '';
  ui.value.value = prettyJson(ui.value.value);
  onEditorInput();
}

/** Lists the schema violations of a refused save beside the value (none: hides the list). */
export function showViolations(violations) {
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

export function setEditorBusy(editing, busy) {
  editing.busy = busy;
  if (state.editor === editing) syncEditorButtons();
}

/** Enables the editor's buttons unless a request is under way (Save also not during a conflict). */
export function syncEditorButtons() {
  const busy = Boolean(state.editor && state.editor.busy);
  ui.save.disabled = busy || Boolean(state.conflict);
  ui.deleteKey.disabled = busy;
  ui.deleteConfirmYes.disabled = busy;
  ui.conflictReapply.disabled = busy;
  ui.conflictDiscard.disabled = busy;
}
