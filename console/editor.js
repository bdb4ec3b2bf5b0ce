// The editor: a key's value saved with compare-and-swap (a JSON object's edit as a
// merge patch), schema violations, the conflict view, deleting a key, changes made
// underneath the editor, and secrets, opened in the browser with a key file.

import { api, configUrl, etag, historyUrl, isAbort, keyUrl } from './api.js?v={{version}}';
import { editsApart, isJsonType, jsonObject, jsonProblem, looksLikeJsonContainer, mergePatch, parseJson, prettyJson, writeJson } from './json.js?v={{version}}';
import { schemasFor } from './schemas.js?v={{version}}';
import { state } from './state.js?v={{version}}';
import { el, ui } from './elements.js?v={{version}}';
import { ageElement, base64Length, displayValue, expiryOf, isBinary, isSecret, relativeTime, whoMadeIt } from './format.js?v={{version}}';
import { flash, showFailure } from './page.js?v={{version}}';
import { closeHistory, openHistory, timeline } from './history.js?v={{version}}';
import { renderSecret } from './secrets.js?v={{version}}';
import { markCurrentInTree, renderRevision, scheduleTreeRender } from './keys.js?v={{version}}';

// ---------------------------------------------------------------------------
// The editor
// ---------------------------------------------------------------------------

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
    originalValue: item && !readOnly ? item.value : '',
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

/** Why a new key's path is not acceptable, or null. */
export function keyPathProblem(key) {
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
export async function onSave(event) {
  event.preventDefault();
  if (!state.editor || state.editor.readOnly || state.editor.busy || state.conflict) return;
  ui.editorMessage.textContent = '';
  const key = state.editor.isNew ? ui.keyPath.value.trim() : state.editor.key;
  if (state.editor.isNew) {
    const problem = keyPathProblem(key) || (state.session.items.has(key) ? `${key} already exists: open it from the tree to edit it.` : null);
    if (problem) {
      ui.editorMessage.textContent = problem;
      ui.keyPath.focus();
      return;
    }
  }
  const value = ui.value.value;
  const contentType = ui.contentType.value.trim() || 'text/plain';
  if (isJsonType(contentType)) {
    const problem = jsonProblem(value);
    if (problem) {
      ui.editorMessage.textContent = `Not saved: the value is not valid JSON (${problem}).`;
      ui.value.focus();
      return;
    }
  }
  const condition = state.editor.isNew ? { 'If-None-Match': '*' } : { 'If-Match': etag(state.editor.baseRevision) };
  await writeKey(key, value, contentType, condition, plannedPatch(value, contentType));
}

/**
 * The merge patch a save sends, or null for a whole PUT: only for a JSON object whose
 * content type stays, with "only the members I changed" checked, and an edit a merge
 * patch can say (objects stay objects, no member set to null, more than layout changed).
 */
export function plannedPatch(value, contentType) {
  if (!state.editor.originalJson || !ui.mergePatch.checked || contentType !== state.editor.originalContentType.trim()) return null;
  const edited = parseJson(value);
  const document = mergePatch(state.editor.originalJson, edited);
  if (!document || document.size === 0) return null;
  return { document, original: state.editor.originalJson, edited };
}

/**
 * Whether a merge patch refused (412) because the key changed can be sent again over
 * the current item: it is still a JSON object of the same content type, and the change
 * made meanwhile touched other members than the edit.
 */
export function patchStillApplies(patch, contentType, item) {
  if (!item || isBinary(item) || (item.contentType || 'text/plain') !== contentType) return false;
  const now = jsonObject(item.value);
  return Boolean(now) && editsApart(patch.original, patch.edited, now);
}

/** The media type of a JSON merge patch (RFC 7386). */
export const MERGE_PATCH_TYPE = 'application/merge-patch+json';

/** How many times a merge patch is sent again over changes to other members. */
export const MERGE_ATTEMPTS = 3;

/**
 * Writes the editor's value under `condition`: a PUT of the whole value, or, given a
 * `patch`, a PATCH with the merge patch. A merge patch refused because someone changed
 * other members meanwhile is sent again with If-Match of their revision, so both
 * changes stay. Resolves to { envelope, mergedOver } or, when the change made
 * meanwhile collides with the edit, { conflictWith: the current item or null }.
 */
export async function sendWrite(current, key, value, contentType, condition, patch) {
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
export async function writeKey(key, value, contentType, condition, patch = null) {
  const current = state.session;
  const editing = state.editor;
  setEditorBusy(editing, true);
  showViolations([]);
  try {
    const sent = await sendWrite(current, key, value, contentType, condition, patch);
    if (current !== state.session) return;
    if (sent.conflictWith !== undefined) await showConflict(current, editing, key, value, contentType, sent.conflictWith);
    else saved(current, editing, key, sent.envelope, patch ? { mergedOver: sent.mergedOver } : null);
  } catch (error) {
    if (isAbort(error) || current !== state.session) return;
    if (error.status === 412) await showConflict(current, editing, key, value, contentType);
    else if (error.code === 'schemaViolation' && error.violations.length && state.editor === editing) showViolations(error.violations);
    else showFailure(error, ui.editorMessage);
  } finally {
    setEditorBusy(editing, false);
  }
  // A live change that arrived during the save: judge it against the new revision.
  if (editing.pending && state.editor) editorSawChange(editing.pending);
}

/**
 * A save answered: the tree and the editor take the saved item. `merged` is set for a
 * merge patch: { mergedOver }, the revision of someone else's change it was merged with.
 */
export function saved(current, editing, key, envelope, merged) {
  const { item } = envelope;
  current.items.set(key, item);
  current.changed.delete(key);
  current.revision = Math.max(current.revision, envelope.revision ?? item.modRevision);
  renderRevision();
  scheduleTreeRender(current);
  if (state.editor === editing) {
    loadEditor({ key, isNew: false, item });
    ui.save.focus();
  }
  const how = !merged ? '' : merged.mergedOver
    ? ` (the members you changed, merged with the change of revision ${merged.mergedOver})`
    : ' (the members you changed)';
  flash(`Saved ${key}${how} at revision ${envelope.revision ?? item.modRevision}`);
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

// ---- Schemas ----

/** Which schemas check the key in the editor, each with a button to read it. */
export function renderSchemaInfo() {
  if (!state.editor || state.editor.isNew || !state.session) return;
  if (state.session.schemas === null) {
    ui.schemaInfo.replaceChildren(state.session.schemasError ? `unknown (${state.session.schemasError})` : 'reading…');
    return;
  }
  const schemas = schemasFor(state.session.schemas, state.editor.key);
  ui.schemaInfo.replaceChildren(...(schemas.length ? schemas.flatMap((schema) => [
    el('span', { className: 'schema-name' }, schema.prefix ? `${schema.target} (the keys under it)` : `${schema.target} (this key)`),
    el('button', { type: 'button', 'data-schema': schema.target, 'aria-controls': 'schema-view' }, 'View'),
  ]) : ['none']));
  // The schema being read: read again (it may have changed), or closed if it no longer applies.
  if (state.editor.schemaShown && schemas.some((schema) => schema.target === state.editor.schemaShown)) showSchema(state.editor.schemaShown, false);
  else hideSchema();
}

export function onSchemaClick(event) {
  const button = event.target.closest('button[data-schema]');
  if (!button || !state.editor) return;
  if (state.editor.schemaShown === button.dataset.schema && !ui.schemaView.hidden) hideSchema();
  else showSchema(button.dataset.schema, true);
}

export function hideSchema() {
  if (state.editor) state.editor.schemaShown = null;
  ui.schemaView.hidden = true;
}

/** Reads the schema of `target` (GET schema?target=) and shows it as text, indented when it is JSON. */
export async function showSchema(target, focus) {
  const current = state.session;
  const editing = state.editor;
  editing.schemaShown = target;
  let text;
  try {
    const response = await api('GET', `${configUrl(current.name)}/schema?target=${encodeURIComponent(target)}`, {
      signal: current.controller.signal, raw: true,
    });
    text = await response.text();
  } catch (error) {
    if (isAbort(error) || current !== state.session || state.editor !== editing) return;
    if (error.status === 401) {
      showFailure(error, ui.editorMessage);
      return;
    }
    text = `The schema could not be read: ${error.message}`;
  }
  if (current !== state.session || state.editor !== editing || editing.schemaShown !== target) return;
  ui.schemaViewHeading.textContent = `Schema of ${target}`;
  ui.schemaText.textContent = jsonProblem(text) === null ? prettyJson(text) : text;
  ui.schemaView.hidden = false;
  if (focus) ui.schemaViewHeading.focus();
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

// ---- Delete a key ----

export function onDeleteKey() {
  if (!state.editor || state.editor.isNew) return;
  ui.deleteConfirmText.textContent = `Delete ${state.editor.key}? Its history stays, but the key is gone.`;
  ui.deleteConfirm.hidden = false;
  ui.deleteConfirmNo.focus();
}

export function onDeleteCancel() {
  ui.deleteConfirm.hidden = true;
  ui.deleteKey.focus();
}

export async function onDeleteConfirmed() {
  if (!state.editor || state.editor.isNew || state.editor.busy) return;
  const current = state.session;
  const editing = state.editor;
  const { key } = editing;
  ui.editorMessage.textContent = '';
  setEditorBusy(editing, true);
  try {
    const envelope = await api('DELETE', keyUrl(current.name, key), {
      headers: { 'If-Match': etag(editing.baseRevision) },
      signal: current.controller.signal,
    });
    if (current !== state.session) return;
    forgetKey(current, key, envelope.revision);
    if (state.editor === editing) closeEditor();
    flash(`Deleted ${key}${envelope.revision ? ` at revision ${envelope.revision}` : ''}`);
    ui.newKey.focus();
  } catch (error) {
    if (isAbort(error) || current !== state.session) return;
    if (error.status === 404) {
      forgetKey(current, key);
      if (state.editor === editing) closeEditor();
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

export function forgetKey(current, key, revision) {
  current.items.delete(key);
  current.changed.delete(key);
  if (revision) current.revision = Math.max(current.revision, revision);
  renderRevision();
  scheduleTreeRender(current);
}

/** A delete refused because the key changed: show what it is now before trying again. */
export async function refuseStaleDelete(current, editing) {
  let item = null;
  try {
    item = (await api('GET', keyUrl(current.name, editing.key), { signal: current.controller.signal })).item;
  } catch (error) {
    if (error.status !== 404) {
      showFailure(error, ui.editorMessage);
      return;
    }
  }
  if (current !== state.session || state.editor !== editing) return;
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
export function editorSawChange(change) {
  if (!state.editor) return;
  const openKeyPath = state.editor.isNew ? ui.keyPath.value.trim() : state.editor.key;
  if (change.key !== openKeyPath) return;
  if (state.editor.busy) {
    state.editor.pending = change; // judged when the save or delete answers
    return;
  }
  if (state.editor.isNew) {
    if (change.type === 'put') showChangedNotice(change);
    return;
  }
  if (change.type === 'put' && change.item.modRevision <= state.editor.baseRevision) return; // seen already
  if (state.conflict) {
    // The conflict view compares against the current value: keep it current (a
    // change older than the value shown, held back during the save, is dropped).
    const shown = state.conflict.current ? state.conflict.current.modRevision : 0;
    if (change.revision > shown) {
      state.conflict.current = change.item;
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

export function showChangedNotice(change) {
  state.editor.latest = change;
  if (change.type === 'put') {
    const merges = state.editor.originalJson && ui.mergePatch.checked;
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
export function syncEditorWithTree() {
  if (!state.editor || state.editor.isNew || !state.session) return;
  const item = state.session.items.get(state.editor.key);
  if (!item) {
    editorSawChange({ key: state.editor.key, type: 'delete', revision: state.session.revision, item: null });
  } else if (item.modRevision > state.editor.baseRevision) {
    editorSawChange({ key: state.editor.key, type: 'put', revision: item.modRevision, item });
  }
}

/** "Load the current value": drops the edits for what the server has now. */
export function onLoadCurrent() {
  if (!state.editor || !state.editor.latest) return;
  const change = state.editor.latest;
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
export async function showConflict(current, editing, key, value, contentType, known) {
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
  if (current !== state.session || state.editor !== editing) return;
  state.conflict = { key, value, contentType, current: item, change: null };
  ui.changedNotice.hidden = true;
  renderConflict();
  ui.conflictHeading.focus();
  // Who made the change that got in the way, and why: the key's newest event.
  try {
    const envelope = await api('GET', `${historyUrl(current.name, key)}?limit=1`, { signal: current.controller.signal });
    const change = (envelope.events || [])[0];
    if (!change || !state.conflict || state.conflict.key !== key || current !== state.session) return;
    state.conflict.change = change;
    renderConflict();
  } catch {
    // The conflict view stands without it: "by someone else".
  }
}

/** "changed by ops-admin, 2 min ago: move to the new primary", of the change that made `revision`. */
export function conflictChange(change, revision, verb) {
  if (!change || (revision !== undefined && change.revision !== revision)) return `${verb} by someone else`;
  const why = change.message ? `: ${change.message}` : '';
  return `${verb} by ${whoMadeIt(change)}, ${relativeTime(change.at)}${why}`;
}

export function renderConflict() {
  ui.conflict.hidden = !state.conflict;
  syncEditorButtons();
  if (!state.conflict) return;
  ui.conflictMine.textContent = state.conflict.value;
  const theirs = state.conflict.current;
  const change = state.conflict.change;
  if (theirs) {
    ui.conflictTheirsHeading.textContent = `Current value (revision ${theirs.modRevision}, ${conflictChange(change, theirs.modRevision, 'changed')})`;
    ui.conflictTheirs.textContent = displayValue(theirs);
  } else {
    ui.conflictTheirsHeading.textContent = `Current value (${conflictChange(change && change.type !== 'put' ? change : null, undefined, 'deleted')})`;
    ui.conflictTheirs.textContent = '';
  }
}

/** "Re-apply mine": saves your value over the current revision, knowingly. */
export async function onConflictReapply() {
  if (!state.conflict || !state.editor || state.editor.busy) return;
  const { key, value, contentType, current } = state.conflict;
  const condition = current ? { 'If-Match': etag(current.modRevision) } : { 'If-None-Match': '*' };
  state.conflict = null;
  renderConflict();
  await writeKey(key, value, contentType, condition);
}

/** "Discard mine": loads the current value into the editor. */
export function onConflictDiscard() {
  if (!state.conflict) return;
  const { key, current } = state.conflict;
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
