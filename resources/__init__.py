"""Data files shipped with Voxdesk (read them with :func:`voxdesk.app.resources.resource_path`)."""
