// Which of the config's schemas check the key in the editor, and a schema read and shown
// as text (indented when it is JSON).

import { api, configUrl, isAbort } from './api.js?v={{version}}';
import { jsonProblem, prettyJson } from './json.js?v={{version}}';
import { schemasFor } from './schemas.js?v={{version}}';
import { state } from './state.js?v={{version}}';
import { el, ui } from './elements.js?v={{version}}';
import { showFailure } from './page.js?v={{version}}';

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
