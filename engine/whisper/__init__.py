"""The built-in CPU engine: faster-whisper models, their catalog, cache and download, and the
streaming engine that decodes partials and finals on a shared decode queue."""
