"""Audio files: reading, feeding them to an engine at a chosen pace, and what came out."""
