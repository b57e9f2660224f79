"""The tableref application: command line and the wiring between stages."""
