"""The YAML-authored knowledge: read with positions (`yamlnodes`), loaded and cached (`loader`),
validated against the schema and the catalog's own rules (`validate`), scan templates turned
into catalog messages (`templates`), and the committed record of verified examples
(`verified`)."""
