"""The drift gate and the figures beside it: `check` compares the catalog, the scan and the
generated module; `examples` runs each entry's example; `stats` counts coverage; `pythons`
refuses a `requires-python` the generated module cannot serve."""
