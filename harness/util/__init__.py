"""L0 leaves: file, git, strict-YAML and serving helpers. They import only harness.errors."""
