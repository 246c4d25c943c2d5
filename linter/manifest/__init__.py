"""Stage 1: bytes to a checked manifest. Loading (YAML with positions and limits), the quick
schema check, validation with plain-words errors, the pydantic models the schema is made
from, and the catalog that fills in what a named part leaves out. Imports only the package
root's shared vocabulary."""
