"""Transcript history: the SQLite store, export to text and subtitle formats, and its commands."""
