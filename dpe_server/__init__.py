"""dpe-server: office files as Document-Page-Element trees, served as dpe:// MCP resources."""

__version__ = "0.1.0"
