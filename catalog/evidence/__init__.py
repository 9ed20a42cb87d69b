"""What the package itself shows about its errors beyond its source: the tests that expect
them (`tested`) and the public calls that raise them when run (`reproduce`). The pages stage
turns these into the `knowledge` items of each entry."""
