"""vision stage."""
