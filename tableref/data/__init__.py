"""Bundled sample data."""
