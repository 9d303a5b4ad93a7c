"""dpe-server: office files as Document-Page-Element trees, served as dpe:// MCP resources."""

__version__ = "0.1.0"

TOKEN_ENV = "DPE_SERVER_TOKEN"
"""The environment variable holding the HTTP bearer token (`--token`)."""
