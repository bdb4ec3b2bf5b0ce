// One config: its keys read page by page, drawn as a tree of folders, and its changes
// followed live over Server-Sent Events (long-polling where the server cannot stream).

import { api, ApiError, configUrl, isAbort } from './api.js?v={{version}}';
import { SCHEMA_NAMESPACE } from './schemas.js?v={{version}}';
import { newSession, state } from './state.js?v={{version}}';
import { el, ui } from './elements.js?v={{version}}';
import { clearErrors, showFailure, showView } from './page.js?v={{version}}';
import { closeSnapshot, forgetTimeline, hideAtRevision } from './history.js?v={{version}}';
import { closeEditor, editorSawChange, renderSchemaInfo, requestKey, syncEditorWithTree } from './editor.js?v={{version}}';
import { hideTransfer } from './transfer.js?v={{version}}';
import { hideDeleteConfig } from './configs.js?v={{version}}';
import { signOut } from './signin.js?v={{version}}';

export const RECONNECT_DELAY_MS = 1000;
export const MAX_RETRY_AFTER_MS = 30000;
export const LONG_POLL_SECONDS = 25;

// ---------------------------------------------------------------------------
// One config: keys and the live watch
// ---------------------------------------------------------------------------

export async function openConfig(name) {
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
  watch(current);
}

/** Stops the open config's requests and watch and forgets it. */
export function closeConfig() {
  if (!state.session) return;
  state.session.controller.abort();
  state.session = null;
  state.editor = null;
  state.conflict = null;
  forgetTimeline();
}

/** Reads every key of the config, page by page, and redraws the tree. */
export async function loadKeys(current) {
  const items = new Map();
  let revision = null;
  let cursor = null;
  do {
    const query = `?recursive&limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const page = await api('GET', `${configUrl(current.name)}/keys${query}`, { signal: current.controller.signal });
    for (const item of page.items || []) items.set(item.key, item);
    // Later pages may be newer; resuming the watch after the first page's revision
    // replays what changed meanwhile, and replays are recognised (applyChange).
    if (revision === null) revision = page.revision ?? 0;
    cursor = page.cursor;
  } while (cursor);

  if (current !== state.session) return;
  current.items = items;
  current.revision = revision;
  current.lastEventId = String(revision);
  renderRevision();
  renderTree();
  syncEditorWithTree();
  loadSchemas(current);
}

/** Reads the targets of the config's schemas, then shows which check the open key. */
export async function loadSchemas(current) {
  try {
    const envelope = await api('GET', `${configUrl(current.name)}/schemas`, { signal: current.controller.signal });
    current.schemas = (envelope.schemas || []).map((schema) => schema && schema.target).filter((target) => typeof target === 'string');
    current.schemasError = '';
  } catch (error) {
    if (isAbort(error)) return;
    current.schemasError = error.message || String(error);
  }
  if (current === state.session) renderSchemaInfo();
}

/** A schema changed: reads them again, once for a burst of changes. */
export function scheduleSchemaLoad(current) {
  if (current.schemasQueued) return;
  current.schemasQueued = true;
  setTimeout(() => {
    current.schemasQueued = false;
    if (current === state.session) loadSchemas(current);
  }, 0);
}

export function renderRevision() {
  if (state.session) ui.configRevision.textContent = `Revision ${state.session.revision}`;
}

/** Sets the live status; `text` overrides the words for a state that is not live. */
export function setLive(current, live, text) {
  if (current !== state.session) return;
  ui.liveStatus.textContent = live ? 'Live' : (text || 'Reconnecting…');
  ui.liveStatus.classList.toggle('connected', live);
}

/** Waits `ms` milliseconds, or less if the signal aborts. */
export function sleep(ms, signal) {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => { clearTimeout(timer); resolve(); }, { once: true });
  });
}

/**
 * Follows the config's changes until the session ends: a Server-Sent Events stream,
 * reconnected a second after it drops with Last-Event-ID so nothing is missed, or a
 * long poll where the server cannot stream.
 */
export async function watch(current) {
  const { signal } = current.controller;
  while (!signal.aborted) {
    let delay = RECONNECT_DELAY_MS;
    try {
      if (current.polling) await pollChanges(current);
      else await streamChanges(current);
    } catch (error) {
      if (signal.aborted) return;
      if (error.status === 401) {
        signOut(error.message);
        return;
      }
      if (error.status === 406 && !current.polling) {
        current.polling = true; // API Gateway cannot stream: long-poll instead.
        continue;
      }
      if (error.status === 404 || error.status === 403 || error.status === 400) {
        // The config is gone or the token may not watch it: retrying will not help.
        setLive(current, false, 'Not live');
        showFailure(error, ui.configError);
        return;
      }
      if (error.status === 410) {
        // History was compacted past where the watch would resume: start over.
        await reloadAfterCompaction(current);
        continue;
      }
      if (error.retryAfter) delay = Math.min(error.retryAfter * 1000, MAX_RETRY_AFTER_MS);
    }
    if (signal.aborted) return;
    setLive(current, false);
    await sleep(delay, signal);
  }
}

export async function reloadAfterCompaction(current) {
  setLive(current, false);
  try {
    await loadKeys(current);
  } catch (error) {
    if (!isAbort(error)) await sleep(RECONNECT_DELAY_MS, current.controller.signal);
  }
}

/** Reads one Server-Sent Events stream until it ends. */
export async function streamChanges(current) {
  const headers = { Accept: 'text/event-stream' };
  if (current.lastEventId !== null) headers['Last-Event-ID'] = current.lastEventId;
  const response = await api('GET', `${configUrl(current.name)}/watch`, {
    headers, signal: current.controller.signal, raw: true,
  });
  if (!response.body || !(response.headers.get('Content-Type') || '').includes('text/event-stream')) {
    throw new ApiError(406, 'notStreaming', 'The server does not stream changes.');
  }
  setLive(current, true);

  const parser = new EventStreamParser((message) => onStreamMessage(current, message));
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    parser.push(decoder.decode(value, { stream: true }));
  }
  parser.push(decoder.decode());
}

/**
 * The Server-Sent Events format, parsed by hand since EventSource cannot send an
 * Authorization header: lines of `field: value`, comment lines starting with ":",
 * a blank line ending each event. Calls `onMessage({ id, event, data })` per event.
 */
export class EventStreamParser {
  constructor(onMessage) {
    this.onMessage = onMessage;
    this.buffer = '';
    this.reset();
  }

  reset() {
    this.id = null;
    this.event = '';
    this.data = [];
  }

  push(chunk) {
    let text = this.buffer + chunk;
    // A chunk ending in \r may be cut inside \r\n: keep the \r for the next chunk.
    let carry = '';
    if (text.endsWith('\r')) {
      text = text.slice(0, -1);
      carry = '\r';
    }
    const lines = text.split(/\r\n|\r|\n/);
    this.buffer = lines.pop() + carry;
    for (const line of lines) this.line(line);
  }

  line(line) {
    if (line === '') {
      this.dispatch();
      return;
    }
    if (line.startsWith(':')) return; // a heartbeat or comment
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') this.event = value;
    else if (field === 'data') this.data.push(value);
    else if (field === 'id' && !value.includes('\0')) this.id = value;
    // retry and unknown fields are ignored: the console reconnects on its own.
  }

  dispatch() {
    if (this.data.length || this.id !== null) {
      this.onMessage({ id: this.id, event: this.event || 'message', data: this.data.join('\n') });
    }
    this.reset();
  }
}

export function onStreamMessage(current, { id, event, data }) {
  if (current !== state.session) return;
  // An `error` event (the reader fell behind) ends the stream; the watch reconnects
  // after its id and loses nothing.
  if (event !== 'error' && data) {
    try {
      applyChange(current, JSON.parse(data));
    } catch (error) {
      console.warn('discfg console: an event could not be read', error);
    }
  }
  if (id !== null) current.lastEventId = id;
}

/**
 * Long-polls for changes until an error: each answer holds the events after
 * fromRevision and the last revision it accounted for.
 */
export async function pollChanges(current) {
  // After R the next revision is R + 1; after R.P (inside a transaction) read R again:
  // the events already applied are recognised as replays.
  const last = Number(current.lastEventId ?? current.revision);
  let from = Number.isInteger(last) ? last + 1 : Math.floor(last);
  // The first poll answers at once, so the status says "Live" as soon as polling works.
  let wait = 0;
  for (;;) {
    const envelope = await api('GET', `${configUrl(current.name)}/watch?fromRevision=${from}&timeout=${wait}`, {
      signal: current.controller.signal,
    });
    wait = LONG_POLL_SECONDS;
    if (current !== state.session) return;
    setLive(current, true);
    for (const event of envelope.events || []) applyChange(current, event);
    if (typeof envelope.revision === 'number') {
      current.lastEventId = String(envelope.revision);
      from = envelope.revision + 1;
    }
  }
}

/**
 * Applies one change ({ key, type, revision, item }) to the tree and the editor.
 * Changes already reflected (a replay after reconnecting, or the echo of this
 * console's own save) are recognised by their revisions and only move the revision.
 */
export function applyChange(current, change) {
  if (!change || typeof change.key !== 'string') return;
  const { key, type } = change;
  const revision = Number(change.revision) || 0;
  const known = current.items.get(key);
  current.revision = Math.max(current.revision, revision);
  renderRevision();

  if (type === 'put' && change.item) {
    if (known && known.modRevision >= change.item.modRevision) return;
    current.items.set(key, change.item);
    current.changed.add(key);
  } else if (type === 'delete' || type === 'expire') {
    if (!known || known.modRevision > revision) return;
    current.items.delete(key);
    current.changed.delete(key);
  } else {
    return;
  }
  if (key.startsWith(SCHEMA_NAMESPACE)) scheduleSchemaLoad(current);
  scheduleTreeRender(current);
  editorSawChange({ key, type, revision, item: type === 'put' ? change.item : null });
}

/** Redraws the tree once after a burst of changes (a transaction's events). */
export function scheduleTreeRender(current) {
  if (current.renderQueued) return;
  current.renderQueued = true;
  setTimeout(() => {
    current.renderQueued = false;
    if (current === state.session) renderTree();
  }, 0);
}

// ---------------------------------------------------------------------------
// The key tree
// ---------------------------------------------------------------------------

/** Folders by "/" segments: { path, folders: Map(name → folder), keys: [{ name, key }] }. */
export function buildTree(keys) {
  const root = { path: '/', folders: new Map(), keys: [] };
  for (const key of keys) {
    const segments = key.slice(1).split('/');
    let node = root;
    for (const segment of segments.slice(0, -1)) {
      let child = node.folders.get(segment);
      if (!child) {
        child = { name: segment, path: `${node.path}${segment}/`, folders: new Map(), keys: [] };
        node.folders.set(segment, child);
      }
      node = child;
    }
    node.keys.push({ name: segments[segments.length - 1], key });
  }
  return root;
}

export const byText = (a, b) => (a < b ? -1 : a > b ? 1 : 0);

/** Redraws the tree from the session's items and the filter, keeping focus in place. */
export function renderTree() {
  if (!state.session) return;
  const filter = ui.keyFilter.value.trim().toLowerCase();
  const keys = [...state.session.items.keys()]
    .filter((key) => !filter || key.toLowerCase().includes(filter))
    .sort(byText);

  const focused = ui.keys.contains(document.activeElement) ? document.activeElement : null;
  const focusKey = focused && focused.dataset.key;
  const focusFolder = focused && focused.dataset.folder;

  ui.keys.replaceChildren();
  const total = state.session.items.size;
  ui.keyCount.textContent = filter ? `${keys.length} of ${total} keys match` : `${total} ${total === 1 ? 'key' : 'keys'}`;
  if (!keys.length) {
    ui.keys.append(el('p', { className: 'empty' }, total ? 'No key matches the filter.' : 'No keys yet. Use “New key” to add one.'));
  } else {
    let counter = 0;
    const nextId = () => `folder-${(counter += 1)}`;
    ui.keys.append(renderFolder(buildTree(keys), Boolean(filter), nextId));
  }

  // A redraw replaces the buttons: give focus back to the one that had it.
  let target = null;
  if (focusKey) target = ui.keys.querySelector(`button[data-key="${CSS.escape(focusKey)}"]`);
  else if (focusFolder) target = ui.keys.querySelector(`button[data-folder="${CSS.escape(focusFolder)}"]`);
  if (target) target.focus();
}

/** A folder's contents as a list: its folders (toggle button + nested list), then its keys. */
export function renderFolder(node, filtering, nextId) {
  const list = el('ul');
  const closed = filtering ? state.session.filterCollapsed : state.session.collapsed;
  for (const folder of [...node.folders.values()].sort((a, b) => byText(a.name, b.name))) {
    const open = !closed.has(folder.path);
    const id = nextId();
    const toggle = el('button', {
      type: 'button', className: 'folder', 'data-folder': folder.path,
      'aria-expanded': String(open), 'aria-controls': id, title: folder.path,
    }, `${folder.name}/`);
    const children = renderFolder(folder, filtering, nextId);
    children.id = id;
    children.hidden = !open;
    list.append(el('li', {}, toggle, children));
  }
  for (const leaf of [...node.keys].sort((a, b) => byText(a.name, b.name))) {
    list.append(el('li', {}, keyButton(leaf)));
  }
  return list;
}

export function keyButton({ name, key }) {
  const changed = state.session.changed.has(key);
  const button = el('button', {
    type: 'button', className: changed ? 'key changed' : 'key', 'data-key': key, title: key,
    'aria-current': state.editor && !state.editor.isNew && state.editor.key === key ? 'true' : null,
  }, name);
  if (changed) {
    button.append(
      el('span', { className: 'marker', 'aria-hidden': 'true' }, '●'),
      el('span', { className: 'sr-only' }, ' (changed)'),
    );
  }
  return button;
}

export function onTreeClick(event) {
  const folder = event.target.closest('button[data-folder]');
  if (folder) {
    toggleFolder(folder);
    return;
  }
  const key = event.target.closest('button[data-key]');
  if (key) requestKey(key.dataset.key);
}

/** Opens or closes a folder in place, remembering it for later redraws. */
export function toggleFolder(button) {
  const open = button.getAttribute('aria-expanded') !== 'true';
  const closed = ui.keyFilter.value.trim() ? state.session.filterCollapsed : state.session.collapsed;
  if (open) closed.delete(button.dataset.folder);
  else closed.add(button.dataset.folder);
  button.setAttribute('aria-expanded', String(open));
  const group = document.getElementById(button.getAttribute('aria-controls'));
  if (group) group.hidden = !open;
}

export function onFilterInput() {
  if (!state.session) return;
  state.session.filterCollapsed.clear(); // a new filter shows every match
  renderTree();
}

/** Marks the key open in the editor in the tree. */
export function markCurrentInTree() {
  for (const button of ui.keys.querySelectorAll('button[data-key]')) {
    const current = state.editor && !state.editor.isNew && state.editor.key === button.dataset.key;
    if (current) button.setAttribute('aria-current', 'true');
    else button.removeAttribute('aria-current');
  }
}
