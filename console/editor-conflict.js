// The conflict view: a save refused because the key changed meanwhile, beside the
// current value and who changed it and why. Discarding the edit loads the current value;
// re-applying it is a save (editor-save.js).

import { api, historyUrl, isAbort, keyUrl } from './api.js?v={{version}}';
import { state } from './state.js?v={{version}}';
import { ui } from './elements.js?v={{version}}';
import { readableValue, relativeTime, whoMadeIt } from './format.js?v={{version}}';
import { flash, showFailure } from './page.js?v={{version}}';
import { closeEditor, loadEditor, syncEditorButtons } from './editor.js?v={{version}}';

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
  // Both sides as the editor shows values: JSON indented, so they read line by line alike.
  ui.conflictMine.textContent = readableValue({ value: state.conflict.value, contentType: state.conflict.contentType });
  const theirs = state.conflict.current;
  const change = state.conflict.change;
  if (theirs) {
    ui.conflictTheirsHeading.textContent = `Current value (revision ${theirs.modRevision}, ${conflictChange(change, theirs.modRevision, 'changed')})`;
    ui.conflictTheirs.textContent = readableValue(theirs);
  } else {
    ui.conflictTheirsHeading.textContent = `Current value (${conflictChange(change && change.type !== 'put' ? change : null, undefined, 'deleted')})`;
    ui.conflictTheirs.textContent = '';
  }
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
