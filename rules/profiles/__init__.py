"""Built-in rule profiles (TOML data)."""
