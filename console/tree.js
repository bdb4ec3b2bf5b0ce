// The open config's keys as a tree of folders, filtered as the user types, and its
// revision. discfg's own records (the schemas under /.discfg/) are not shown or counted;
// a key a schema checks carries a badge naming it. A click on a key goes to the function
// the caller passes (the editor's), and each redraw (every change to the keys ends in
// one) is told to what console.js gave afterTreeRender, so the tree imports nothing above it.

import { state } from './state.js?v={{version}}';
import { el, ui } from './elements.js?v={{version}}';
import { isInternalKey, schemasFor } from './schemas.js?v={{version}}';

export function renderRevision() {
  if (state.session) ui.configRevision.textContent = `Revision ${state.session.revision}`;
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

/** What follows each redraw of the tree: set by console.js (the flags view). */
let treeFollower = null;

/**
 * Sets what is called with the open config after each redraw of the tree: every change
 * to its keys (read, changed live, saved, deleted, restored) ends in one, so a view
 * showing what the keys hold stays current without being imported here.
 */
export function afterTreeRender(handler) {
  treeFollower = handler;
}

/** Redraws the tree from the session's items and the filter, keeping focus in place. */
export function renderTree() {
  if (!state.session) return;
  const filter = ui.keyFilter.value.trim().toLowerCase();
  const own = [...state.session.items.keys()].filter((key) => !isInternalKey(key));
  const keys = own.filter((key) => !filter || key.toLowerCase().includes(filter)).sort(byText);

  const focused = ui.keys.contains(document.activeElement) ? document.activeElement : null;
  const focusKey = focused && focused.dataset.key;
  const focusFolder = focused && focused.dataset.folder;

  ui.keys.replaceChildren();
  const total = own.length;
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
  if (treeFollower) treeFollower(state.session);
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
  for (const schema of schemasFor(state.session.schemas || [], key)) {
    button.append(' ', el('span', {
      className: 'badge schema-badge', 'data-schema-badge': schema.target,
      title: schema.prefix ? `Checked by the schema of ${schema.target}` : 'Checked by its own schema',
    }, schema.prefix ? `schema ${schema.target}` : 'schema'));
  }
  if (changed) {
    button.append(
      el('span', { className: 'marker', 'aria-hidden': 'true' }, '●'),
      el('span', { className: 'sr-only' }, ' (changed)'),
    );
  }
  return button;
}

/** A click in the tree: a folder opens or closes; a key is passed to `openKey`. */
export function onTreeClick(event, openKey) {
  const folder = event.target.closest('button[data-folder]');
  if (folder) {
    toggleFolder(folder);
    return;
  }
  const key = event.target.closest('button[data-key]');
  if (key) openKey(key.dataset.key);
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
