"""One blueprint per screen, and one for the JSON API."""
