"""dpe-server: office files as Document-Page-Element trees, served as dpe:// MCP resources."""

__version__ = "0.1.0"

TOKEN_ENV = "DPE_SERVER_TOKEN"
"""The environment variable holding the HTTP bearer token (`--token`)."""
PASSWORDS_ENV = "DPE_SERVER_PASSWORDS"
"""The environment variable naming the passwords file when `--passwords` is not given."""
