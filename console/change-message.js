// The message a change carries (why it was made), as history, `discfg log` and watch
// events show it: sent in the Discfg-Message header, percent-encoded UTF-8.

/** The most bytes a change message may have once decoded, as the API takes it. */
export const MAX_MESSAGE_BYTES = 1024;

/** Why a change message cannot be sent, or null. */
export function changeMessageProblem(text) {
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u0008\u000b-\u001f\u007f]/.test(text)) return 'A change message cannot contain control characters.';
  const bytes = new TextEncoder().encode(text).length;
  if (bytes > MAX_MESSAGE_BYTES) return `A change message is at most ${MAX_MESSAGE_BYTES} bytes; this one is ${bytes}.`;
  return null;
}

/** The headers that send `text` as the change's message: none for an empty one. */
export function changeMessageHeaders(text) {
  const message = text.trim();
  return message ? { 'Discfg-Message': encodeURIComponent(message) } : {};
}
