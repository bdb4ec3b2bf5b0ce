// The list of configs: creating one, opening one (its keys, then its changes live), and
// deleting the open one.

import { api, API, configUrl, isAbort } from './api.js?v={{version}}';
import { closeConfig, newSession, state } from './state.js?v={{version}}';
import { el, ui } from './elements.js?v={{version}}';
import { ageElement } from './format.js?v={{version}}';
import { addressed, clearErrors, CONFIG_NAME, flash, navigate, setPanel, showFailure, showView, togglePanel } from './page.js?v={{version}}';
import { closeSnapshot, hideAtRevision } from './snapshot.js?v={{version}}';
import { closeEditor, followAddress } from './editor.js?v={{version}}';
import { loadKeys } from './keys.js?v={{version}}';
import { setLive, watch } from './watch.js?v={{version}}';
import { hideTransfer } from './transfer.js?v={{version}}';
import { hideRevisions } from './revisions.js?v={{version}}';
import { hideFlags } from './flags.js?v={{version}}';
import { resetDeployments } from './deployments.js?v={{version}}';
import { hideDeployConfirm } from './deployment-actions.js?v={{version}}';

// ---------------------------------------------------------------------------
// Configs
// ---------------------------------------------------------------------------

/** Shows the list of configs, fetching it unless `configs` is given. */
export async function showConfigs(configs) {
  closeConfig();
  showView('configs');
  clearErrors();
  ui.configsHeading.focus();
  try {
    const listed = await ownKeyCounts(configs || (await api('GET', `${API}/configs`)).configs || []);
    if (state.signedIn && !state.session && !ui.configsView.hidden) renderConfigs(listed);
  } catch (error) {
    showFailure(error, ui.configsError);
  }
}

/**
 * The configs with their key counts less discfg's own records: a config keeps each of
 * its schemas as a key under /.discfg/, which the store counts and the console does not
 * show. A config whose schemas cannot be read (a token that may not) keeps its count.
 */
export function ownKeyCounts(configs) {
  return Promise.all(configs.map(async (config) => {
    if (typeof config.keyCount !== 'number' || config.keyCount === 0) return config;
    try {
      const envelope = await api('GET', `${configUrl(config.name)}/schemas`);
      const schemas = Array.isArray(envelope.schemas) ? envelope.schemas.length : 0;
      return { ...config, keyCount: Math.max(0, config.keyCount - schemas) };
    } catch (error) {
      if (error.status === 401) throw error;
      return config;
    }
  }));
}

export function renderConfigs(configs) {
  const sorted = [...configs].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  ui.configs.replaceChildren();
  if (!sorted.length) {
    ui.configs.append(el('li', { className: 'empty' }, 'No configs yet. Create one below.'));
    return;
  }
  for (const config of sorted) {
    const changed = config.modified || config.created;
    const button = el('button', { type: 'button', 'data-config': config.name },
      // The spaces between the parts keep them apart in the button's accessible name.
      el('span', { className: 'config-name' }, config.name), ' ',
      el('span', { className: 'config-meta' }, `revision ${config.revision ?? 0}`), ' ',
      // keyCount is missing for a config whose count the store does not know yet.
      typeof config.keyCount === 'number'
        ? el('span', { className: 'config-meta' }, `${config.keyCount} ${config.keyCount === 1 ? 'key' : 'keys'}`)
        : '', ' ',
      el('span', { className: 'config-meta' }, changed ? ageElement(changed, 'changed ') : ''));
    ui.configs.append(el('li', {}, button));
  }
}

export function onConfigClick(event) {
  const button = event.target.closest('button[data-config]');
  if (button) navigate(button.dataset.config);
}

export async function onCreateConfig(event) {
  event.preventDefault();
  ui.configsError.textContent = '';
  const name = ui.newConfigName.value.trim();
  if (!CONFIG_NAME.test(name)) {
    ui.configsError.textContent = 'A config name is 1 to 200 letters, digits, “_”, “.” or “-”.';
    ui.newConfigName.focus();
    return;
  }
  ui.newConfigSubmit.disabled = true;
  try {
    await api('PUT', configUrl(name));
    ui.newConfigName.value = '';
    flash(`Created config ${name}`);
    const listed = await ownKeyCounts((await api('GET', `${API}/configs`)).configs || []);
    if (state.signedIn && !state.session) renderConfigs(listed);
  } catch (error) {
    showFailure(error, ui.configsError);
  } finally {
    ui.newConfigSubmit.disabled = false;
  }
}

// ---------------------------------------------------------------------------
// One config
// ---------------------------------------------------------------------------

export async function openConfig(name) {
  // The key the address names (a reload, a shared link), opened once the keys are read.
  const address = addressed();
  const wanted = address && address.config === name ? address.key : null;
  closeConfig();
  const current = newSession(name);
  state.session = current;

  showView('config');
  clearErrors();
  ui.configTitle.textContent = name;
  ui.configRevision.textContent = 'Revision …';
  ui.keyFilter.value = '';
  ui.keys.replaceChildren();
  ui.keyCount.textContent = 'Loading keys…';
  hideDeleteConfig();
  hideAtRevision();
  hideTransfer();
  hideRevisions();
  hideFlags();
  hideDeployConfirm();
  resetDeployments();
  closeSnapshot(false);
  closeEditor();
  setLive(current, false, 'Connecting…');
  ui.configTitle.focus();

  try {
    await loadKeys(current);
  } catch (error) {
    if (isAbort(error) || current !== state.session) return;
    ui.keyCount.textContent = '';
    showFailure(error, ui.configError);
    if (error.status === 404) setLive(current, false, 'Not live');
    return;
  }
  if (wanted && current === state.session) followAddress(wanted);
  watch(current);
}

// ---------------------------------------------------------------------------
// Delete a config
// ---------------------------------------------------------------------------

export function onDeleteConfigToggle() {
  togglePanel(ui.deleteConfig, ui.deleteConfigForm, () => {
    ui.deleteConfigLabel.textContent = `Type “${state.session.name}” to delete this config, its keys and its history`;
    ui.deleteConfigConfirm.value = '';
    ui.deleteConfigError.textContent = '';
    ui.deleteConfigConfirm.focus();
  }, hideDeleteConfig);
}

export function hideDeleteConfig() {
  setPanel(ui.deleteConfig, ui.deleteConfigForm, false);
}

export async function onDeleteConfig(event) {
  event.preventDefault();
  if (!state.session) return;
  const { name } = state.session;
  if (ui.deleteConfigConfirm.value.trim() !== name) {
    ui.deleteConfigError.textContent = `Type the config's name, ${name}, exactly to delete it.`;
    ui.deleteConfigConfirm.focus();
    return;
  }
  ui.deleteConfigSubmit.disabled = true;
  try {
    await api('DELETE', configUrl(name), { signal: state.session.controller.signal });
    flash(`Deleted config ${name}`);
    navigate(null);
  } catch (error) {
    showFailure(error, ui.deleteConfigError);
  } finally {
    ui.deleteConfigSubmit.disabled = false;
  }
}
