// One config's changes followed live: a Server-Sent Events stream read with fetch(),
// reconnected with Last-Event-ID so nothing is missed, or a long poll where the server
// cannot stream; each change applied to the tree and the editor.

import { api, ApiError, configUrl, isAbort, signInNeeded } from './api.js?v={{version}}';
import { SCHEMA_NAMESPACE } from './schemas.js?v={{version}}';
import { state } from './state.js?v={{version}}';
import { ui } from './elements.js?v={{version}}';
import { showFailure } from './page.js?v={{version}}';
import { renderRevision, scheduleTreeRender } from './tree.js?v={{version}}';
import { editorSawChange } from './editor-changes.js?v={{version}}';
import { loadKeys, scheduleSchemaLoad } from './keys.js?v={{version}}';

export const RECONNECT_DELAY_MS = 1000;
export const MAX_RETRY_AFTER_MS = 30000;
export const LONG_POLL_SECONDS = 25;

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
        signInNeeded(error.message);
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
