"""webui stage."""
