"""The ``voxdesk`` command line: transcribe, serve, history, and the terminal output they share."""
