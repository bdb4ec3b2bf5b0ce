// Which JSON Schemas check a key. A schema is attached to one key (its value must meet
// it) or to a prefix, a path ending in “/” (the keys under it, as one JSON document,
// must meet it). The console reads the config's schemas with GET /v1/{config}/schemas
// and reads them again when a change under SCHEMA_NAMESPACE, where the config keeps
// them, arrives through its watch.

/** The keys a config keeps its schemas under: a change there may change its schemas. */
export const SCHEMA_NAMESPACE = '/.discfg/schema/';

/** Whether a key is discfg's own record (under /.discfg/), kept out of the tree and its counts. */
export const isInternalKey = (key) => key === '/.discfg' || key.startsWith('/.discfg/');

/**
 * The schemas that check `key`, from the targets of a config's schemas: its own, then
 * the one of the nearest prefix holding it, each as { target, prefix }. Keys under
 * /.discfg/ are discfg's own records, which no prefix schema checks.
 */
export function schemasFor(targets, key) {
  if (isInternalKey(key)) return [];
  let own = null;
  let nearest = null;
  for (const target of targets) {
    if (typeof target !== 'string') continue;
    if (target === key) own = { target, prefix: false };
    else if (target.endsWith('/') && key.startsWith(target) && (!nearest || target.length > nearest.target.length)) {
      nearest = { target, prefix: true };
    }
  }
  return [own, nearest].filter(Boolean);
}
