// Export and import: the config (or the config at a revision) as JSON, YAML or env
// text, and a file imported as one transaction.

import { api, ApiError, configUrl, isAbort } from './api.js?v={{version}}';
import { state } from './state.js?v={{version}}';
import { el, ui } from './elements.js?v={{version}}';
import { flash, setPanel, showFailure, togglePanel } from './page.js?v={{version}}';
import { applyChange } from './watch.js?v={{version}}';

// ---------------------------------------------------------------------------
// Export and import
// ---------------------------------------------------------------------------

export const importTypes = { json: 'application/json', yaml: 'application/yaml', env: 'text/plain; charset=utf-8' };

export function onTransferToggle() {
  togglePanel(ui.transferToggle, ui.transfer, () => {
    ui.transferError.textContent = '';
    ui.transferStatus.textContent = '';
    ui.exportFormat.focus();
  }, hideTransfer);
}

export function hideTransfer() {
  setPanel(ui.transferToggle, ui.transfer, false);
  ui.importForm.reset();
  ui.importReplaceBox.hidden = true;
}

/** Downloads the config's export (at `revision`, or now) as a file. */
export async function downloadExport(format, revision, area) {
  const current = state.session;
  if (!current) return;
  area.textContent = '';
  const at = revision ? `&revision=${revision}` : '';
  try {
    const response = await api('GET', `${configUrl(current.name)}/export?format=${format}${at}`, {
      headers: { Accept: '*/*' }, signal: current.controller.signal, raw: true,
    });
    // A body cut short (history needed for the export gone meanwhile) rejects here.
    const blob = await response.blob();
    if (current !== state.session) return;
    const name = `${current.name}${revision ? `-r${revision}` : ''}.${format}`;
    const url = URL.createObjectURL(blob);
    const link = el('a', { href: url, download: name, hidden: true });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 60000);
    flash(`Downloaded ${name} (${blob.size} bytes)`);
  } catch (error) {
    if (isAbort(error) || current !== state.session) return;
    if (error instanceof ApiError) showFailure(error, area);
    else area.textContent = 'The export ended before it was complete (the history it needed changed meanwhile). Export again.';
  }
}

/** The format a file's name implies, or null. */
export function formatOfFile(name) {
  const lower = name.toLowerCase();
  if (lower.endsWith('.json')) return 'json';
  if (lower.endsWith('.yaml') || lower.endsWith('.yml')) return 'yaml';
  if (lower.endsWith('.env') || lower.startsWith('.env')) return 'env';
  return null;
}

export function onImportReplaceToggle() {
  ui.importReplaceBox.hidden = !ui.importReplace.checked;
  if (ui.importReplace.checked && state.session) {
    ui.importReplaceLabel.textContent = `Type “${state.session.name}” to delete every key of it the file does not have`;
    ui.importReplaceConfirm.value = '';
    ui.importReplaceConfirm.focus();
  }
}

export async function onImport(event) {
  event.preventDefault();
  const current = state.session;
  if (!current) return;
  ui.transferError.textContent = '';
  ui.transferStatus.textContent = '';
  const file = ui.importFile.files[0];
  if (!file) {
    ui.transferError.textContent = 'Choose a file to import.';
    ui.importFile.focus();
    return;
  }
  const format = ui.importFormat.value || formatOfFile(file.name);
  if (!format) {
    ui.transferError.textContent = `The format of “${file.name}” cannot be told from its name: choose JSON, YAML or env.`;
    ui.importFormat.focus();
    return;
  }
  const replace = ui.importReplace.checked;
  if (replace && ui.importReplaceConfirm.value.trim() !== current.name) {
    ui.transferError.textContent = `Replacing deletes keys: type the config's name, ${current.name}, exactly to go on.`;
    ui.importReplaceConfirm.focus();
    return;
  }
  ui.importSubmit.disabled = true;
  try {
    // The file itself is the body: the browser sends it without reading it into the page.
    const envelope = await api('POST', `${configUrl(current.name)}/import?format=${format}${replace ? '&replace' : ''}`, {
      body: file, headers: { 'Content-Type': importTypes[format] }, signal: current.controller.signal,
    });
    if (current !== state.session) return;
    const changed = (envelope.events || []).length;
    const unchanged = envelope.unchanged || 0;
    const message = changed
      ? `Imported ${file.name}: ${changed} ${changed === 1 ? 'key' : 'keys'} changed, ${unchanged} unchanged, now at revision ${envelope.revision}.`
      : `Imported ${file.name}: nothing changed (${unchanged} ${unchanged === 1 ? 'key' : 'keys'} already as in the file).`;
    ui.transferStatus.textContent = message;
    flash(message);
    ui.importForm.reset();
    ui.importReplaceBox.hidden = true;
    // The watch brings the changes; applying them here too shows them at once.
    for (const change of envelope.events || []) applyChange(current, change);
  } catch (error) {
    if (isAbort(error) || current !== state.session) return;
    showFailure(error, ui.transferError);
  } finally {
    ui.importSubmit.disabled = false;
  }
}
