// Secrets in the editor: shown masked; revealed in this tab only, with the config's
// key file, opened by Web Crypto (sealed.js). Nothing is sent.

import { api, ApiError, configUrl, isAbort } from './api.js?v={{version}}';
import { acceptsLegacySeals, importKeyFile, openSealed, unwrapDataKey } from './sealed.js?v={{version}}';
import { state } from './state.js?v={{version}}';
import { ui } from './elements.js?v={{version}}';
import { isSecret } from './format.js?v={{version}}';
import { showFailure } from './page.js?v={{version}}';

// ---------------------------------------------------------------------------
// Secrets
// ---------------------------------------------------------------------------
//
// A secret is sealed in the client (AES-256-GCM under one of its config's data keys,
// which are kept wrapped by the config's key). The server never holds a key, so the
// console shows secrets masked. Where the config's key is a key file, the user may
// give the file to this tab: the browser opens the data key and the value itself with
// Web Crypto, keeps the key in memory for this config only, and sends nothing.

/** The config's encryption settings (read once per open config, or again when `fresh`), or null. */
export async function encryptionOf(current, fresh = false) {
  if (current.encryption === undefined || fresh) {
    const envelope = await api('GET', configUrl(current.name), { signal: current.controller.signal });
    current.encryption = (envelope.info && envelope.info.settings && envelope.info.settings.encryption) || null;
  }
  return current.encryption;
}

export const isFileKeyName = (name) => typeof name === 'string' && name.startsWith('file://');

/** One of the config's data keys, opened with the key file given to this tab. */
export async function dataKey(current, id) {
  if (current.dataKeys.has(id)) return current.dataKeys.get(id);
  const find = (encryption) => encryption && (encryption.dataKeys || []).find((candidate) => candidate.id === id);
  // A data key made since the settings were read (discfg key rotate): read them again.
  const entry = find(await encryptionOf(current)) || find(await encryptionOf(current, true));
  if (!entry) throw new Error(`data key “${id}” is not one of this config's data keys`);
  const key = await unwrapDataKey(current.fileKey, current.name, id, entry.wrapped);
  current.dataKeys.set(id, key);
  return key;
}

/** Opens a secret item of the open config: its value as text, and its own content type. */
export const openSecret = (current, item) => openSealed(
  current.name, item, (id) => dataKey(current, id),
  // Read fresh: a config upgraded by key rotate --reseal since it was opened refuses them.
  async () => acceptsLegacySeals(await encryptionOf(current, true)),
);

/** Shows the secret panel for a secret item (or hides it for null). */
export async function renderSecret(item) {
  ui.secret.hidden = !item;
  ui.secretValue.hidden = true;
  ui.secretValue.textContent = '';
  ui.secretHide.hidden = true;
  ui.secretReveal.hidden = true;
  ui.secretKeyField.hidden = true;
  ui.secretError.textContent = '';
  if (!item) return;
  const current = state.session;
  ui.secretNote.textContent = 'Sealed in the client with this config\'s key. The server keeps only ciphertext, so the console shows it masked. It cannot be edited here: set it with discfg set --secret.';
  let encryption = null;
  try {
    encryption = await encryptionOf(current);
  } catch (error) {
    if (current === state.session) showFailure(error, ui.secretError);
    return;
  }
  if (current !== state.session || !state.editor || state.editor.item !== item) return;
  const name = encryption && encryption.key;
  if (!window.crypto || !window.crypto.subtle) {
    ui.secretNote.textContent += ' Revealing it needs a secure page (https or localhost).';
  } else if (isFileKeyName(name)) {
    ui.secretKeyField.hidden = Boolean(current.fileKey);
    ui.secretReveal.hidden = !current.fileKey;
    if (!current.fileKey) ui.secretNote.textContent += ` Its key is the key file ${name.slice('file://'.length)}: choose that file to reveal the value in this tab.`;
  } else {
    const what = name ? `Its key is ${name}, which a browser cannot use` : 'This config names no key';
    ui.secretNote.textContent += ` ${what}: reveal it with discfg get ${current.name} ${item.key}.`;
  }
}

/** A key file was chosen: read it, keep it for this config, and reveal the value. */
export async function onSecretKeyChosen() {
  const file = ui.secretKey.files[0];
  const current = state.session;
  ui.secretKey.value = '';
  if (!file || !current) return;
  ui.secretError.textContent = '';
  const key = file.size < 1024 ? await importKeyFile(await file.text()) : null;
  if (current !== state.session) return;
  if (!key) {
    ui.secretError.textContent = `${file.name} is not a discfg key file (made by discfg key init).`;
    return;
  }
  current.fileKey = key;
  current.dataKeys = new Map();
  await revealSecret();
}

export async function revealSecret() {
  if (!state.editor || !isSecret(state.editor.item) || !state.session || !state.session.fileKey) return;
  const current = state.session;
  const { item } = state.editor;
  ui.secretError.textContent = '';
  try {
    const opened = await openSecret(current, item);
    if (current !== state.session || !state.editor || state.editor.item !== item) return;
    ui.secretValue.textContent = opened.text;
    ui.secretValue.hidden = false;
    ui.secretHide.hidden = false;
    ui.secretReveal.hidden = true;
    ui.secretKeyField.hidden = true;
    ui.secretHide.focus();
  } catch (error) {
    if (isAbort(error) || current !== state.session) return;
    if (error instanceof ApiError) showFailure(error, ui.secretError);
    else ui.secretError.textContent = `Not revealed: ${error.message}.`;
    // A key file that opens nothing is not kept.
    if (!(error instanceof ApiError) && current.dataKeys.size === 0) {
      current.fileKey = null;
      ui.secretKeyField.hidden = false;
      ui.secretReveal.hidden = true;
    }
  }
}

export function hideSecret() {
  ui.secretValue.textContent = '';
  ui.secretValue.hidden = true;
  ui.secretHide.hidden = true;
  ui.secretReveal.hidden = !(state.session && state.session.fileKey);
  ui.secretReveal.focus();
}
