// The open config's feature flags: every flag of every flag set under /flags/ with its
// state, default variant, variants, targeting and metadata, redrawn as changes arrive;
// and the kill switch, which disables or enables one flag after a confirmation, as one
// change that rewrites only that flag's `state` in its set, conditioned on the set's
// revision (If-Match), with the change message typed beside it.

import { api, etag, isAbort, keyUrl } from './api.js?v={{version}}';
import { changeMessageHeaders, changeMessageProblem } from './change-message.js?v={{version}}';
import { flagSets, isFlagSetKey, otherState, readFlagSet, settingFlagState } from './flag-sets.js?v={{version}}';
import { state } from './state.js?v={{version}}';
import { el, ui } from './elements.js?v={{version}}';
import { flash, setPanel, showFailure, togglePanel } from './page.js?v={{version}}';
import { applyChange } from './watch.js?v={{version}}';

/** The switch asked for and awaiting its confirmation: { session, set, flag, to }, or null. */
let asked = null;
/** What the flags shown were drawn from: { current, signature }. */
let drawnFrom = { current: null, signature: '' };

// ---------------------------------------------------------------------------
// The panel
// ---------------------------------------------------------------------------

export function onFlagsToggle() {
  togglePanel(ui.flagsToggle, ui.flags, () => {
    hideFlagConfirm();
    renderFlags();
    ui.flagsHeading.focus();
  }, hideFlags);
}

export function hideFlags() {
  hideFlagConfirm();
  setPanel(ui.flagsToggle, ui.flags, false);
}

/**
 * The open config's keys were drawn again (after any change to them): redraws the flags
 * when the panel is open and a flag set changed since they were drawn.
 */
export function onKeysRendered(current) {
  if (!current || current !== state.session || ui.flags.hidden) return;
  if (drawnFrom.current === current && drawnFrom.signature === signature(current)) return;
  renderFlags();
}

/** The flag sets' keys and revisions, which the flags shown are drawn from. */
function signature(current) {
  return [...current.items.values()].filter((item) => isFlagSetKey(item.key)).map((item) => `${item.key}@${item.modRevision}`).sort().join('\n');
}

/** Draws the flags of the open config from the items it holds, keeping focus in place. */
export function renderFlags() {
  const current = state.session;
  if (!current) return;
  const focused = ui.flagsList.contains(document.activeElement) ? document.activeElement.dataset.flagSwitch : null;
  drawnFrom = { current, signature: signature(current) };
  const sets = flagSets(current.items);
  const flags = sets.reduce((count, set) => count + set.flags.length, 0);
  ui.flagsList.replaceChildren();
  if (!sets.length) {
    ui.flagsSummary.textContent = '';
    ui.flagsList.append(el('p', { className: 'empty' },
      'No flags in this config. A flag set is a JSON document in flagd\'s format at a key under /flags/: write one with ',
      el('code', {}, `discfg set ${current.name} /flags/NAME -d file.json`),
      ' or with “New key” (see docs/flags.md).'));
    return;
  }
  const disabled = sets.reduce((count, set) => count + set.flags.filter((flag) => flag.state === 'DISABLED').length, 0);
  ui.flagsSummary.textContent = `${flags} ${flags === 1 ? 'flag' : 'flags'} in ${sets.length} flag ${sets.length === 1 ? 'set' : 'sets'}`
    + `${disabled ? `, ${disabled} disabled` : ''}.`;
  for (const set of sets) ui.flagsList.append(renderSet(set));
  if (focused) {
    const again = ui.flagsList.querySelector(`button[data-flag-switch="${CSS.escape(focused)}"]`);
    if (again) again.focus();
  }
}

function renderSet(set) {
  const section = el('section', { className: 'flag-set', 'data-flag-set': set.key },
    el('h3', {}, el('code', {}, set.key), ' ', el('span', { className: 'badge' }, `revision ${set.revision}`)));
  if (set.problem) {
    section.append(el('p', { className: 'error', 'data-flag-set-problem': set.key }, `${set.key} cannot be read as a flag set: ${set.problem}`));
    return section;
  }
  if (set.metadata.length) section.append(el('p', { className: 'hint' }, 'Set metadata: ', pairs(set.metadata)));
  if (!set.flags.length) section.append(el('p', { className: 'empty' }, 'This set defines no flags.'));
  for (const flag of set.flags) section.append(renderFlag(set, flag));
  return section;
}

/** `name=value, …` as text. */
const pairs = (list) => list.map(([name, value]) => `${name}=${value}`).join(', ');

function renderFlag(set, flag) {
  const enabled = flag.state === 'ENABLED';
  const toggle = el('button', {
    type: 'button', className: enabled ? 'danger-text' : '', 'data-flag-switch': flag.key, 'data-flag-set': set.key,
    'aria-label': `${enabled ? 'Disable' : 'Enable'} flag ${flag.key}…`,
  }, enabled ? 'Disable…' : 'Enable…');
  const variants = el('ul', { className: 'flag-variants' });
  for (const [name, value] of flag.variants) {
    const isDefault = name === flag.defaultVariant;
    variants.append(el('li', { 'data-variant': name },
      el('code', {}, name), ' = ', el('code', { className: 'flag-value' }, value),
      isDefault ? ' ' : '', isDefault ? el('span', { className: 'badge' }, 'default') : ''));
  }
  const details = el('dl', { className: 'flag-details' },
    el('div', {}, el('dt', {}, 'Default variant'), el('dd', { 'data-field': 'defaultVariant' },
      flag.defaultVariant ?? 'none — the caller\'s default')),
    el('div', {}, el('dt', {}, 'Variants'), el('dd', {}, variants)),
    el('div', {}, el('dt', {}, 'Targeting'), el('dd', { 'data-field': 'targeting' },
      flag.targeting === null ? 'none — static' : el('pre', { className: 'value-text' }, flag.targeting))));
  if (flag.metadata.length) {
    details.append(el('div', {}, el('dt', {}, 'Metadata'), el('dd', { 'data-field': 'metadata' }, pairs(flag.metadata))));
  }
  return el('article', { className: `flag ${enabled ? 'flag-enabled' : 'flag-disabled'}`, 'data-flag': flag.key, 'data-state': flag.state },
    el('div', { className: 'flag-head' },
      el('h4', {}, el('code', {}, flag.key)),
      el('span', { className: 'flag-state', 'data-flag-state': flag.state }, flag.state),
      toggle),
    details);
}

// ---------------------------------------------------------------------------
// The kill switch
// ---------------------------------------------------------------------------

/** A click in the list: a switch asks for its confirmation and a change message. */
export function onFlagsClick(event) {
  const button = event.target.closest('button[data-flag-switch]');
  if (!button || !state.session) return;
  const set = button.dataset.flagSet;
  const flag = button.dataset.flagSwitch;
  const now = flagIn(state.session.items.get(set), flag);
  if (!now) return;
  const to = otherState(now.state);
  asked = { session: state.session, set, flag, to };
  ui.flagConfirmText.textContent = to === 'DISABLED'
    ? `Disable flag “${flag}” in ${set}? Every evaluation then answers the caller's default (reason DISABLED): at once on this server, at the next refresh or watch event on agents and followers.`
    : `Enable flag “${flag}” in ${set}? Evaluations then follow its variants and targeting again.`;
  ui.flagConfirmYes.textContent = to === 'DISABLED' ? 'Disable flag' : 'Enable flag';
  ui.flagConfirmYes.className = to === 'DISABLED' ? 'danger' : 'primary';
  ui.flagMessage.value = '';
  ui.flagConfirm.hidden = false;
  ui.flagConfirm.scrollIntoView({ block: 'nearest' });
  ui.flagMessage.focus();
}

export function hideFlagConfirm() {
  asked = null;
  ui.flagConfirm.hidden = true;
}

export function onFlagConfirmCancel() {
  const flag = asked && asked.flag;
  hideFlagConfirm();
  const button = flag && ui.flagsList.querySelector(`button[data-flag-switch="${CSS.escape(flag)}"]`);
  if (button) button.focus();
}

/** The flag `key` as its set's item now has it, or null. */
function flagIn(item, key) {
  if (!item) return null;
  const read = readFlagSet(item);
  return read.problem ? null : read.flags.find((flag) => flag.key === key) || null;
}

/** "Disable flag" / "Enable flag": one PUT of the set with only the flag's state changed, If-Match its revision. */
export async function onFlagConfirmed() {
  if (!asked || asked.session !== state.session || ui.flagConfirmYes.disabled) return;
  const { session: current, set, flag, to } = asked;
  const messageProblem = changeMessageProblem(ui.flagMessage.value);
  if (messageProblem) {
    ui.flagsError.textContent = `Not changed: ${messageProblem}`;
    ui.flagMessage.focus();
    return;
  }
  const item = current.items.get(set);
  const now = flagIn(item, flag);
  if (!now) {
    ui.flagsError.textContent = `Not changed: ${set} no longer defines flag “${flag}”.`;
    hideFlagConfirm();
    return;
  }
  if (now.state === to) {
    flash(`Flag ${flag} is already ${to}: nothing changed`);
    hideFlagConfirm();
    return;
  }
  let edited;
  try {
    edited = settingFlagState(item.value, flag, to);
  } catch (error) {
    ui.flagsError.textContent = `Not changed: ${error.message}.`;
    return;
  }
  ui.flagConfirmYes.disabled = true;
  try {
    const envelope = await api('PUT', keyUrl(current.name, set), {
      body: edited,
      headers: { 'Content-Type': item.contentType || 'application/json', ...changeMessageHeaders(ui.flagMessage.value), 'If-Match': etag(item.modRevision) },
      signal: current.controller.signal,
    });
    if (current !== state.session) return;
    hideFlagConfirm();
    const revision = envelope.revision ?? envelope.item.modRevision;
    applyChange(current, { key: set, type: 'put', revision, item: envelope.item });
    renderFlags();
    flash(`Flag ${flag} ${to === 'DISABLED' ? 'disabled' : 'enabled'} in ${set} at revision ${revision}`);
  } catch (error) {
    if (isAbort(error) || current !== state.session) return;
    if (error.status === 412 || error.status === 404) {
      hideFlagConfirm();
      ui.flagsError.textContent = `Not changed: someone changed ${set} since it was shown. It has been read again: check flag “${flag}” and switch it again if it is still needed.`;
      await readSetAgain(current, set);
    } else {
      showFailure(error, ui.flagsError); // a token that may not, a schema's refusal: the API's words
    }
  } finally {
    ui.flagConfirmYes.disabled = false;
  }
}

/** Reads a flag set again after a refused switch, and shows it as it is now. */
async function readSetAgain(current, set) {
  try {
    const { item } = await api('GET', keyUrl(current.name, set), { signal: current.controller.signal });
    if (current === state.session) applyChange(current, { key: set, type: 'put', revision: item.modRevision, item });
  } catch (error) {
    if (isAbort(error) || current !== state.session) return;
    if (error.status === 404) applyChange(current, { key: set, type: 'delete', revision: current.revision, item: null });
    else showFailure(error, ui.flagsError);
  }
  if (current === state.session) renderFlags();
}
