// JSON values, pointers, patches and schemas are part of the domain's API (a patch is an
// operation of a change, a schema part of a config), so every module that speaks the
// domain speaks them too.
@_exported import JSONSchema
