// What the console holds between events: the open config, the key in the editor, the
// conflict and the history shown. One object, so every view reads and changes the same
// state; closing the config (closeConfig) forgets them all.

/** What the console holds; every view reads and changes these fields. */
export const state = {
  /** Whether a token has been accepted (the configs view or a config is showing). */
  signedIn: false,
  /**
   * The open config, or null. A new object each time a config is opened: async work
   * checks it is still the current one before touching the page, and its controller
   * cancels its requests and its watch.
   */
  session: null,
  /**
   * The key in the editor, or null:
   * { key, isNew, item, baseRevision, originalValue, storedValue, originalContentType,
   *   originalJson, readOnly, busy, pending, latest, schemaShown }
   * baseRevision is the modRevision the edit started from (sent as If-Match);
   * originalValue the value as shown (a JSON value indented), storedValue as stored;
   * originalJson the loaded value parsed, when it is a JSON object (its edits are saved
   * as a merge patch); pending holds a live change that arrived during a save; latest
   * the change behind the changed-underneath notice; schemaShown the target of the
   * schema being read.
   */
  editor: null,
  /** The refused save being shown in the conflict view: { key, value, contentType, current }. */
  conflict: null,
  /** Increases with every key opened, so a slow answer for an older one is dropped. */
  openTicket: 0,
  /**
   * The history shown for the key in the editor, or null:
   * { key, events (newest first), cursor, a, b (revisions compared), ticket }.
   */
  timeline: null,
};

export function newSession(name) {
  return {
    name,
    revision: 0,
    items: new Map(), // key → item
    changed: new Set(), // keys changed live since the config was opened
    collapsed: new Set(), // folder paths the user closed
    filterCollapsed: new Set(), // the same while a filter is typed
    lastEventId: null, // the watch resumes after this event
    polling: false, // true when the server cannot stream (API Gateway): long-poll
    renderQueued: false,
    controller: new AbortController(),
    encryption: undefined, // the config's encryption settings, read when a secret is shown
    fileKey: null, // the key file given to reveal secrets (a CryptoKey), this config only
    dataKeys: new Map(), // data key id → CryptoKey, opened with fileKey
    snapshotRevision: null, // the revision shown read-only, if any
    schemas: null, // the targets of the config's schemas (GET schemas), null until read
    schemasError: '', // why they could not be read
    schemasQueued: false, // a read of them is due
  };
}

/** Stops the open config's requests and watch and forgets it, with its editor and history. */
export function closeConfig() {
  if (!state.session) return;
  state.session.controller.abort();
  state.session = null;
  state.editor = null;
  state.conflict = null;
  state.timeline = null;
}
