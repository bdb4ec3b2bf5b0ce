// Opening discfg secrets in the browser, with Web Crypto.
//
// A secret is sealed in the client: AES-256-GCM under one of its config's data keys,
// which the config's settings keep wrapped (AES-256-GCM) by the config's key. Where
// that key is a key file (`discfg key init`), the file opens the data keys, and they
// open the values. Nothing here talks to the network: the page hands in the config's
// wrapped data keys and the sealed items the API returned.

/** The bytes of a base64 text. */
export function base64Bytes(text) {
  const binary = atob(text.replace(/\s/g, ''));
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i += 1) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

export const utf8 = (text) => new TextEncoder().encode(text);

/** Bytes as UTF-8 text, or null when they are not UTF-8. */
export function textOf(bytes) {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
}

// The sealed format (DiscfgSecrets' SecretBox): DSE2 binds a value to its key's create
// revision and version; DSE1, the first format, to its version alone.
const SECRET_MAGIC = 'DSE2';
const LEGACY_MAGIC = 'DSE1';
const KEY_FILE_HEADER = 'discfg-key-v1';

/** The 32 bytes of a discfg key file's text, or null when it is not one. */
function keyFileBytes(text) {
  const lines = text.split(/\r?\n/).filter((line) => line !== '');
  if (lines.length !== 2 || lines[0] !== KEY_FILE_HEADER) return null;
  try {
    const bytes = base64Bytes(lines[1]);
    return bytes.length === 32 ? bytes : null;
  } catch {
    return null;
  }
}

/**
 * Whether a config (its encryption settings) still opens values sealed in the first
 * format: its current data key's id is a plain number. `discfg key rotate --reseal`
 * seals every secret again and names data keys b1, b2, … from then on (DataKeyIDs in
 * DiscfgSecrets), and such a config refuses first-format values, which a writer without
 * the key could put back from history.
 */
export const acceptsLegacySeals = (encryption) => Boolean(encryption && /^[0-9]+$/.test(encryption.current || ''));

/** The header of a sealed value: format, data key id, own content type, binding, payload. */
function sealedParts(bytes) {
  const fail = () => { throw new Error(`the value is marked secret but is not a sealed discfg secret (${bytes.length} bytes)`); };
  const magic = bytes.length >= 4 ? String.fromCharCode(...bytes.slice(0, 4)) : '';
  if (magic !== SECRET_MAGIC && magic !== LEGACY_MAGIC) fail();
  const legacy = magic === LEGACY_MAGIC;
  const bindingBytes = legacy ? 8 : 16;
  if (bytes.length < 4 + 2 + bindingBytes + 12 + 16) fail();
  let offset = 4;
  const idLength = bytes[offset];
  offset += 1;
  if (idLength === 0 || offset + idLength >= bytes.length) fail();
  const dataKeyId = textOf(bytes.slice(offset, offset + idLength)) ?? fail();
  offset += idLength;
  const typeLength = bytes[offset];
  offset += 1;
  if (offset + typeLength + bindingBytes + 28 > bytes.length) fail();
  const contentType = textOf(bytes.slice(offset, offset + typeLength)) ?? fail();
  offset += typeLength;
  const word = () => {
    let value = 0n;
    for (let i = 0; i < 8; i += 1) value = (value << 8n) | BigInt(bytes[offset + i]);
    offset += 8;
    return value;
  };
  const createRevision = legacy ? null : word();
  const version = word();
  return { legacy, dataKeyId, contentType, createRevision, version, nonce: bytes.slice(offset, offset + 12), sealed: bytes.slice(offset + 12) };
}

/** A key file's text as a key that opens data keys, or null when it is not a key file. */
export async function importKeyFile(text) {
  const bytes = keyFileBytes(text);
  return bytes ? crypto.subtle.importKey('raw', bytes, 'AES-GCM', false, ['decrypt']) : null;
}

/**
 * Opens data key `id` of `config`, wrapped (base64) under `fileKey`. The wrap is
 * authenticated with the data key's context, its config and id in key order.
 */
export async function unwrapDataKey(fileKey, config, id, wrappedBase64) {
  const wrapped = base64Bytes(wrappedBase64);
  const context = utf8(`discfg:config=${config}\u0000discfg:dataKey=${id}`);
  let raw;
  try {
    raw = await crypto.subtle.decrypt(
      { name: 'AES-GCM', iv: wrapped.slice(0, 12), additionalData: context, tagLength: 128 },
      fileKey, wrapped.slice(12),
    );
  } catch {
    throw new Error(`data key “${id}” does not open with this key file: it is another config's key`);
  }
  return crypto.subtle.importKey('raw', raw, 'AES-GCM', false, ['decrypt']);
}

/**
 * Opens a sealed item of `config` ({ key, value (base64), version, createRevision }): its
 * value as text (or a description of its bytes) and its own content type.
 * `dataKeyFor(id)` gives the data key it names; `acceptsLegacy()` whether the config
 * still opens first-format values. The value is bound to its config, key, the revision
 * the key was created at and its version: sealed for another (an old value written back,
 * even after the key was deleted and made again), it does not open.
 */
export async function openSealed(config, item, dataKeyFor, acceptsLegacy) {
  const parts = sealedParts(base64Bytes(item.value));
  if (parts.legacy && !(await acceptsLegacy())) {
    throw new Error("this value is sealed in discfg's first format, which this config no longer accepts: someone who cannot open it wrote an old value back; set it again");
  }
  const rolledBack = parts.version !== BigInt(item.version) || (!parts.legacy && parts.createRevision !== BigInt(item.createRevision));
  if (rolledBack) {
    const sealedFor = parts.legacy ? `version ${parts.version}` : `version ${parts.version} of the key created at revision ${parts.createRevision}`;
    throw new Error(`this value was sealed for ${sealedFor}, not for version ${item.version} of the key created at revision ${item.createRevision}: it was rolled back or copied from elsewhere; set it again`);
  }
  const key = await dataKeyFor(parts.dataKeyId);
  const associated = parts.legacy
    ? utf8(`discfg secret v1\u0000${config}\u0000${item.key}\u0000${parts.version}\u0000${parts.dataKeyId}\u0000${parts.contentType}`)
    : utf8(`discfg secret v2\u0000${config}\u0000${item.key}\u0000${parts.createRevision}\u0000${parts.version}\u0000${parts.dataKeyId}\u0000${parts.contentType}`);
  let plain;
  try {
    plain = new Uint8Array(await crypto.subtle.decrypt(
      { name: 'AES-GCM', iv: parts.nonce, additionalData: associated, tagLength: 128 }, key, parts.sealed,
    ));
  } catch {
    throw new Error('the value does not open: it was changed, or copied from another key or version');
  }
  const text = textOf(plain);
  return { text: text ?? `binary value, ${plain.length} bytes`, contentType: parts.contentType || 'text/plain' };
}
