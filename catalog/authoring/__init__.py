"""What errcat writes into a project: drafted YAML entries (`scaffold`, `drafting`), the
generated typed-exception module (`codegen`, with `generated_path` guarding where it goes),
the codemod from raw raises to typed ones (`migrate`) and the check that a typed raise calls
its class as declared (`signature`)."""
