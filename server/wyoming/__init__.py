"""The Wyoming TCP server of ``voxdesk serve --wyoming``."""
