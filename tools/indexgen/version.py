"""The indexgen version; it is recorded in the manifest, so a new version rebuilds all pages."""

__version__ = "0.2.0"
