// Saving the editor's value with compare-and-swap: a PUT with If-Match (If-None-Match
// for a new key), or a JSON object's edit as a merge patch, sent again over changes to
// other members; the change message field's text as the change's message. A refusal opens the conflict view or lists the schema's violations.

import { api, etag, isAbort, keyUrl } from './api.js?v={{version}}';
import { editsApart, isJsonType, jsonObject, jsonProblem, mergePatch, parseJson, writeJson } from './json.js?v={{version}}';
import { changeMessageHeaders, changeMessageProblem } from './change-message.js?v={{version}}';
import { state } from './state.js?v={{version}}';
import { ui } from './elements.js?v={{version}}';
import { isBinary } from './format.js?v={{version}}';
import { flash, showFailure } from './page.js?v={{version}}';
import { renderRevision, scheduleTreeRender } from './tree.js?v={{version}}';
import { loadEditor, setEditorBusy, showViolations } from './editor.js?v={{version}}';
import { renderConflict, showConflict } from './editor-conflict.js?v={{version}}';
import { editorSawChange } from './editor-changes.js?v={{version}}';

/** The media type of a JSON merge patch (RFC 7386). */
export const MERGE_PATCH_TYPE = 'application/merge-patch+json';

/** How many times a merge patch is sent again over changes to other members. */
export const MERGE_ATTEMPTS = 3;

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
  const messageProblem = changeMessageProblem(ui.changeMessage.value);
  if (messageProblem) {
    ui.editorMessage.textContent = `Not saved: ${messageProblem}`;
    ui.changeMessage.focus();
    return;
  }
  // The value as shown, or as stored when it was left as shown (a JSON value is shown
  // indented: saving it untouched keeps its stored text).
  const shown = ui.value.value;
  const value = !state.editor.isNew && shown === state.editor.originalValue ? state.editor.storedValue : shown;
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

/**
 * Writes the editor's value under `condition`: a PUT of the whole value, or, given a
 * `patch`, a PATCH with the merge patch. A merge patch refused because someone changed
 * other members meanwhile is sent again with If-Match of their revision, so both
 * changes stay. Resolves to { envelope, mergedOver } or, when the change made
 * meanwhile collides with the edit, { conflictWith: the current item or null }.
 */
export async function sendWrite(current, key, value, contentType, condition, patch) {
  const { signal } = current.controller;
  // The change message field's text goes with every attempt, a re-applied one too.
  const message = changeMessageHeaders(ui.changeMessage.value);
  if (!patch) {
    const body = value;
    return { envelope: await api('PUT', keyUrl(current.name, key), { body, headers: { 'Content-Type': contentType, ...message, ...condition }, signal }) };
  }
  const body = writeJson(patch.document);
  let ifMatch = condition;
  let mergedOver = null;
  for (let attempt = 1; ; attempt += 1) {
    try {
      const envelope = await api('PATCH', keyUrl(current.name, key), { body, headers: { 'Content-Type': MERGE_PATCH_TYPE, ...message, ...ifMatch }, signal });
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

/** "Re-apply mine": saves your value over the current revision, knowingly. */
export async function onConflictReapply() {
  if (!state.conflict || !state.editor || state.editor.busy) return;
  const { key, value, contentType, current } = state.conflict;
  const condition = current ? { 'If-Match': etag(current.modRevision) } : { 'If-None-Match': '*' };
  state.conflict = null;
  renderConflict();
  await writeKey(key, value, contentType, condition);
}
