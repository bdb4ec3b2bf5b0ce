// One config's keys, read page by page (again when history was compacted past the watch),
// and the targets of its schemas, read again when one of them changes.

import { api, configUrl, isAbort } from './api.js?v={{version}}';
import { state } from './state.js?v={{version}}';
import { renderRevision, renderTree, scheduleTreeRender } from './tree.js?v={{version}}';
import { renderSchemaInfo } from './editor-schema.js?v={{version}}';
import { syncEditorWithTree } from './editor-changes.js?v={{version}}';

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
  if (current !== state.session) return;
  renderSchemaInfo();
  scheduleTreeRender(current); // the keys' schema badges
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
